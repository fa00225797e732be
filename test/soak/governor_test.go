package soak

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/storagebench/storagebench/test/soak/simclock"
)

// governor runs the simulated clock: at the soak's factor while nothing is
// working, paused while anything is, and never past the earliest instant
// something waits for (the cap), so that every simulated instant the soak
// cares about (a step's end, a scheduled time, a restart) is reached
// exactly, and the work it starts is done before time goes on. See doc.go.
type governor struct {
	clock  *simclock.Clock
	factor float64
	// stuckAfter is how long an item may work before it is reported stuck
	// and no longer holds the clock.
	stuckAfter time.Duration

	mu    sync.Mutex
	items map[string]*item
	// stuck lists what was reported stuck, for the result.
	stuck []string
	kick  chan struct{}
	stop  chan struct{}
	done  chan struct{}

	// Statistics: real time the clock ran and stood still.
	lastStat          time.Time
	running, stopped  time.Duration
	pauses, resumes   int
	lastAdvance       time.Time // real time the simulated time last moved
	lastSim           time.Time
	stalledReportedAt time.Time
	// busyBy is the real time the clock stood while something of a kind
	// worked (each kind counted in full when several worked at once).
	busyBy map[string]time.Duration
	log    func(format string, args ...any)
}

// item is something the clock waits for: working from at on (zero: now),
// until it is updated or removed.
type item struct {
	at time.Time
	// what says what it is, for the reports.
	what string
	// since is the real time it was last seen working (zero: not yet).
	since time.Time
	stuck bool
}

func newGovernor(clock *simclock.Clock, factor float64, stuckAfter time.Duration, log func(string, ...any)) *governor {
	g := &governor{clock: clock, factor: factor, stuckAfter: stuckAfter, items: map[string]*item{},
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}), log: log,
		lastStat: time.Now(), lastAdvance: time.Now(), busyBy: map[string]time.Duration{}}
	go g.run()
	return g
}

// set says that key works from at on (zero: from now), what describing it.
func (g *governor) set(key string, at time.Time, what string) {
	g.mu.Lock()
	it := g.items[key]
	if it == nil {
		it = &item{}
		g.items[key] = it
	}
	if !it.at.Equal(at) || it.stuck {
		it.at, it.since, it.stuck = at, time.Time{}, false
	}
	it.what = what
	g.mu.Unlock()
	g.poke()
}

// working says that key works now.
func (g *governor) working(key, what string) { g.set(key, time.Time{}, what) }

// remove forgets key.
func (g *governor) remove(key string) {
	g.mu.Lock()
	delete(g.items, key)
	g.mu.Unlock()
	g.poke()
}

func (g *governor) poke() {
	select {
	case g.kick <- struct{}{}:
	default:
	}
}

func (g *governor) close() {
	close(g.stop)
	<-g.done
}

func (g *governor) run() {
	defer close(g.done)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		g.step()
		select {
		case <-g.stop:
			return
		case <-g.kick:
		case <-tick.C:
		}
	}
}

// step sets the clock from the items: paused while one works, else
// running up to the earliest instant one waits for.
func (g *governor) step() {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.clock.Now()
	real := time.Now()
	busy := false
	var limit time.Time
	d := real.Sub(g.lastStat)
	g.lastStat = real
	kinds := map[string]bool{}
	for key, it := range g.items {
		if it.at.IsZero() || !it.at.After(now) {
			kinds[kindOf(key, it.what)] = true
			if it.since.IsZero() {
				it.since = real
			}
			if !it.stuck && real.Sub(it.since) > g.stuckAfter {
				it.stuck = true
				msg := fmt.Sprintf("%s: %s, working for %s real since simulated %s", key, it.what,
					real.Sub(it.since).Round(time.Second), it.at.UTC().Format(time.RFC3339))
				g.stuck = append(g.stuck, msg)
				g.log("STUCK (no longer holds the clock): %s", msg)
			}
			if !it.stuck {
				busy = true
			}
			continue
		}
		if limit.IsZero() || it.at.Before(limit) {
			limit = it.at
		}
	}
	factor := g.factor
	if busy {
		factor = 0
	}
	was := g.clock.Params()
	if g.clock.Set(factor, limit) {
		if was.Factor > 0 && factor == 0 {
			g.pauses++
		} else if was.Factor == 0 && factor > 0 {
			g.resumes++
		}
	}
	// Statistics, and a report when the clock stood still for long.
	if now.After(g.lastSim) {
		g.running += d
		g.lastSim, g.lastAdvance = now, real
	} else {
		g.stopped += d
		for k := range kinds {
			g.busyBy[k] += d
		}
		if real.Sub(g.lastAdvance) > 30*time.Second && real.Sub(g.stalledReportedAt) > 30*time.Second {
			g.stalledReportedAt = real
			g.log("the clock has stood at %s for %s: %s", now.UTC().Format(time.RFC3339),
				real.Sub(g.lastAdvance).Round(time.Second), g.describeLocked(now, 12))
		}
	}
}

// describe lists the items working at now (at most n) and the earliest
// one waiting.
func (g *governor) describeLocked(now time.Time, n int) string {
	var busy []string
	var next string
	var nextAt time.Time
	for key, it := range g.items {
		if it.at.IsZero() || !it.at.After(now) {
			s := key + " (" + it.what + ")"
			if it.stuck {
				s += " [stuck]"
			}
			busy = append(busy, s)
		} else if nextAt.IsZero() || it.at.Before(nextAt) {
			nextAt, next = it.at, key
		}
	}
	sort.Strings(busy)
	total, more := len(busy), ""
	if len(busy) > n {
		more = fmt.Sprintf(" and %d more", len(busy)-n)
		busy = busy[:n]
	}
	return fmt.Sprintf("%d working: %s%s; next: %s at %s", total, strings.Join(busy, ", "), more, next,
		nextAt.UTC().Format(time.RFC3339))
}

// kindOf is an item's kind: its key's first part and what it does,
// without names and numbers.
func kindOf(key, what string) string {
	kind, _, _ := strings.Cut(key, "/")
	words := strings.Fields(what)
	var keep []string
	for _, w := range words {
		if strings.ContainsAny(w, "0123456789:") {
			break
		}
		keep = append(keep, w)
	}
	return kind + ": " + strings.Join(keep, " ")
}

// busy returns the real time the clock stood while items of each kind
// worked.
func (g *governor) busy() map[string]time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make(map[string]time.Duration, len(g.busyBy))
	for k, v := range g.busyBy {
		out[k] = v
	}
	return out
}

// stats returns the real time the clock ran and stood, and the items
// reported stuck.
func (g *governor) stats() (running, stopped time.Duration, stuck []string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.running, g.stopped, append([]string(nil), g.stuck...)
}
