// Package simclock is the soak's simulated clock (test/soak), one clock
// shared by the driver and the manager processes it starts.
//
// The clock's parameters live in a small file that every process maps
// into memory (MAP_SHARED): the driver writes them under a sequence lock,
// the managers read them at every Now, so both sides always agree on the
// time, to the nanosecond, without polling. The simulated time is
//
//	min(Cap, SimBase + (real − RealBase) × Factor)
//
// where real is CLOCK_MONOTONIC (shared by every process of the machine,
// and never stepped). Factor 0 pauses the clock; Cap stops it at an
// instant until the driver moves it on. Every change re-bases the
// parameters at the current instant, so the simulated time never jumps
// and never goes back.
package simclock

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// fileSize is the mapped file's size: one page.
const fileSize = 4096

// Word indices of the mapped file (8 bytes each).
const (
	wSeq = iota
	wSimBase
	wRealBase
	wFactor
	wLastFactor
	wCap
	words
)

// PausedWaitFloor is the least real time Wait returns while the clock is
// paused or stopped at its cap: a reconciler that asks to be woken when a
// simulated instant has come would otherwise be woken again and again, as
// fast as its queue allows, while the clock stands still.
const PausedWaitFloor = 20 * time.Millisecond

// Params are the clock's parameters.
type Params struct {
	// SimBase is the simulated time at RealBase.
	SimBase time.Time
	// RealBase is a CLOCK_MONOTONIC reading, in nanoseconds.
	RealBase int64
	// Factor is how many simulated seconds pass per real second; 0 pauses.
	Factor float64
	// LastFactor is the last non-zero Factor: what Wait divides by while
	// the clock is paused.
	LastFactor float64
	// Cap, when not zero, is an instant the clock stops at.
	Cap time.Time
}

// At is the simulated time at the monotonic reading real.
func (p Params) At(real int64) time.Time {
	t := p.SimBase
	if p.Factor > 0 && real > p.RealBase {
		t = t.Add(time.Duration(float64(real-p.RealBase) * p.Factor))
	}
	if !p.Cap.IsZero() && t.After(p.Cap) {
		t = p.Cap
	}
	return t
}

// Running reports whether the clock advances at the monotonic reading
// real: not paused, and not stopped at its cap.
func (p Params) Running(real int64) bool {
	return p.Factor > 0 && (p.Cap.IsZero() || p.At(real).Before(p.Cap))
}

// Monotonic is the machine's CLOCK_MONOTONIC, in nanoseconds.
func Monotonic() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic(err) // never on Linux
	}
	return ts.Nano()
}

// shared is the mapped file.
type shared struct {
	mem []byte
}

func mapFile(path string, create bool) (*shared, error) {
	flags := os.O_RDWR
	if create {
		flags |= os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // the mapping outlives the descriptor
	if create {
		if err := f.Truncate(fileSize); err != nil {
			return nil, err
		}
	} else if st, err := f.Stat(); err != nil {
		return nil, err
	} else if st.Size() < fileSize {
		return nil, fmt.Errorf("%s: %d bytes, not a clock file", path, st.Size())
	}
	mem, err := unix.Mmap(int(f.Fd()), 0, fileSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mapping %s: %w", path, err)
	}
	return &shared{mem: mem}, nil
}

// word is the i-th 8-byte word of the page-aligned mapping.
func (s *shared) word(i int) *uint64 {
	return (*uint64)(unsafe.Pointer(&s.mem[i*8]))
}

// load reads the parameters, retrying while a write is in progress.
func (s *shared) load() Params {
	for {
		seq := atomic.LoadUint64(s.word(wSeq))
		if seq%2 == 1 {
			continue // a write in progress: a few nanoseconds
		}
		var v [words]uint64
		for i := wSimBase; i < words; i++ {
			v[i] = atomic.LoadUint64(s.word(i))
		}
		if atomic.LoadUint64(s.word(wSeq)) != seq {
			continue
		}
		p := Params{SimBase: time.Unix(0, int64(v[wSimBase])).UTC(), RealBase: int64(v[wRealBase]),
			Factor: math.Float64frombits(v[wFactor]), LastFactor: math.Float64frombits(v[wLastFactor])}
		if v[wCap] != 0 {
			p.Cap = time.Unix(0, int64(v[wCap])).UTC()
		}
		return p
	}
}

// store writes the parameters; one writer only.
func (s *shared) store(p Params) {
	seq := atomic.LoadUint64(s.word(wSeq))
	atomic.StoreUint64(s.word(wSeq), seq+1)
	atomic.StoreUint64(s.word(wSimBase), uint64(p.SimBase.UnixNano()))
	atomic.StoreUint64(s.word(wRealBase), uint64(p.RealBase))
	atomic.StoreUint64(s.word(wFactor), math.Float64bits(p.Factor))
	atomic.StoreUint64(s.word(wLastFactor), math.Float64bits(p.LastFactor))
	var c uint64
	if !p.Cap.IsZero() {
		c = uint64(p.Cap.UnixNano())
	}
	atomic.StoreUint64(s.word(wCap), c)
	atomic.StoreUint64(s.word(wSeq), seq+2)
}

// Reader is a manager process's view of the clock: a controllers.Clock.
type Reader struct {
	s *shared
}

// Open maps the clock file the driver created.
func Open(path string) (*Reader, error) {
	s, err := mapFile(path, false)
	if err != nil {
		return nil, err
	}
	return &Reader{s: s}, nil
}

// Params are the clock's current parameters.
func (r *Reader) Params() Params { return r.s.load() }

// Now is the simulated time.
func (r *Reader) Now() time.Time { return r.s.load().At(Monotonic()) }

// Wait is how long to wait in real time for d to pass on the clock: d
// divided by the factor (the last one while paused), and at least
// PausedWaitFloor while the clock stands still.
func (r *Reader) Wait(d time.Duration) time.Duration {
	return waitFor(r.s.load(), d)
}

func waitFor(p Params, d time.Duration) time.Duration {
	f := p.Factor
	if f <= 0 {
		f = p.LastFactor
	}
	if f <= 0 {
		f = 1
	}
	w := time.Duration(float64(d) / f)
	if !p.Running(Monotonic()) {
		w = max(w, PausedWaitFloor)
	}
	return w
}

// Clock is the driver's side: it owns the parameters, and wakes its
// waiters (WaitUntil) when their simulated instants come.
type Clock struct {
	s *shared
	p atomic.Pointer[Params]

	mu      sync.Mutex // serialises Set and the waiters
	waiters waiterHeap
	kick    chan struct{}
	stop    chan struct{}
	done    chan struct{}
}

// Create creates the clock file at path, the clock paused at start with
// factor (what Wait divides by until the first Set), and starts waking
// waiters. Close stops it.
func Create(path string, start time.Time, factor float64) (*Clock, error) {
	if factor <= 0 {
		return nil, errors.New("simclock: the factor must be positive")
	}
	s, err := mapFile(path, true)
	if err != nil {
		return nil, err
	}
	c := &Clock{s: s, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	p := Params{SimBase: start.UTC(), RealBase: Monotonic(), LastFactor: factor}
	c.s.store(p)
	c.p.Store(&p)
	go c.run()
	return c, nil
}

// Close stops waking waiters; the file stays mapped (managers may still
// read it).
func (c *Clock) Close() {
	close(c.stop)
	<-c.done
}

// Now is the simulated time.
func (c *Clock) Now() time.Time { return c.p.Load().At(Monotonic()) }

// Params are the current parameters.
func (c *Clock) Params() Params { return *c.p.Load() }

// Wait is the manager's Wait on this clock (for the driver's own pacing).
func (c *Clock) Wait(d time.Duration) time.Duration { return waitFor(*c.p.Load(), d) }

// Set runs the clock at factor (0: paused) up to cap (zero: no cap),
// from the current simulated instant. It reports whether anything
// changed.
func (c *Clock) Set(factor float64, limit time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := *c.p.Load()
	if old.Factor == factor && old.Cap.Equal(limit) {
		return false
	}
	real := Monotonic()
	p := Params{SimBase: old.At(real), RealBase: real, Factor: factor, LastFactor: old.LastFactor, Cap: limit}
	if factor > 0 {
		p.LastFactor = factor
	}
	if !limit.IsZero() && limit.Before(p.SimBase) {
		p.Cap = p.SimBase // a cap already passed stops the clock where it is
	}
	c.s.store(p)
	c.p.Store(&p)
	c.wake()
	return true
}

// Earliest is the earliest instant a waiter waits for (false: none).
func (c *Clock) Earliest() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.waiters) == 0 {
		return time.Time{}, false
	}
	return c.waiters[0].at, true
}

// WaitUntil blocks until the simulated time is at or after t, or ctx
// ends.
func (c *Clock) WaitUntil(ctx context.Context, t time.Time) error {
	if !c.Now().Before(t) {
		return nil
	}
	w := &waiter{at: t, ch: make(chan struct{})}
	c.mu.Lock()
	heap.Push(&c.waiters, w)
	c.mu.Unlock()
	c.wake()
	select {
	case <-w.ch:
		return nil
	case <-ctx.Done():
		c.mu.Lock()
		if w.index >= 0 {
			heap.Remove(&c.waiters, w.index)
		}
		c.mu.Unlock()
		c.wake()
		return ctx.Err()
	}
}

func (c *Clock) wake() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// run wakes the waiters whose instants have come, sleeping until the
// earliest one's instant or the next change of the parameters.
func (c *Clock) run() {
	defer close(c.done)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		c.mu.Lock()
		p := *c.p.Load()
		real := Monotonic()
		now := p.At(real)
		for len(c.waiters) > 0 && !c.waiters[0].at.After(now) {
			w := heap.Pop(&c.waiters).(*waiter)
			close(w.ch)
		}
		next := time.Hour
		if len(c.waiters) > 0 && p.Running(real) {
			d := time.Duration(float64(c.waiters[0].at.Sub(now)) / p.Factor)
			next = max(d, 50*time.Microsecond)
		}
		c.mu.Unlock()
		timer.Reset(next)
		select {
		case <-c.stop:
			return
		case <-c.kick:
		case <-timer.C:
		}
	}
}

type waiter struct {
	at    time.Time
	ch    chan struct{}
	index int
}

type waiterHeap []*waiter

func (h waiterHeap) Len() int           { return len(h) }
func (h waiterHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h waiterHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}

func (h *waiterHeap) Push(x any) {
	w := x.(*waiter)
	w.index = len(*h)
	*h = append(*h, w)
}

func (h *waiterHeap) Pop() any {
	old := *h
	w := old[len(old)-1]
	old[len(old)-1] = nil
	w.index = -1
	*h = old[:len(old)-1]
	return w
}
