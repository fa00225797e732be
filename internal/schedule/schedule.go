// Package schedule decides when a StorageBenchmarkSchedule's runs are due:
// it parses the cron schedule in its time zone and, from the last time a
// run was scheduled and the current time, finds the most recent scheduled
// time not yet run, how many were missed, and the next one. It is pure: no
// Kubernetes, no clock of its own; the controller passes "now".
//
// The rules are the Kubernetes CronJob controller's (see
// docs/schedules.md for where they differ): only the most recent missed
// time is run, never a backlog; a starting deadline drops times that are
// too old to start; more than MaxMissed missed times are reported as too
// many, and the most recent still runs.
package schedule

import (
	"errors"
	"fmt"
	"strings"
	"time"
	// The manager's image has no time zone database of its own.
	_ "time/tzdata"

	"github.com/robfig/cron/v3"
)

// maxWindow bounds the search back from now (a duration doubles past
// 2^63 ns after about 290 years).
const maxWindow = 100 * 365 * 24 * time.Hour

// MaxMissed is how many missed scheduled times are counted; beyond it a
// Due says only that there were more.
const MaxMissed = 100

// Schedule is a parsed cron schedule in its time zone.
type Schedule struct {
	spec cron.Schedule
	loc  *time.Location
}

// ErrInvalid wraps every error Parse returns.
var ErrInvalid = errors.New("invalid schedule")

// Parse parses a standard five-field cron schedule ("minute hour
// day-of-month month day-of-week", or a descriptor such as "@hourly") in
// the IANA time zone timeZone ("" is UTC). A TZ= or CRON_TZ= prefix is
// refused: the time zone is a field of its own, as in a CronJob.
func Parse(spec, timeZone string) (*Schedule, error) {
	s := strings.TrimSpace(spec)
	if strings.HasPrefix(s, "TZ=") || strings.HasPrefix(s, "CRON_TZ=") {
		return nil, fmt.Errorf("%w: %q: set the time zone in timeZone, not in the schedule", ErrInvalid, spec)
	}
	loc := time.UTC
	if timeZone != "" {
		l, err := time.LoadLocation(timeZone)
		if err != nil {
			return nil, fmt.Errorf("%w: unknown time zone %q", ErrInvalid, timeZone)
		}
		loc = l
	}
	c, err := cron.ParseStandard(s)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %w", ErrInvalid, spec, err)
	}
	return &Schedule{spec: c, loc: loc}, nil
}

// Next is the first scheduled time strictly after t; zero when the
// schedule has none within five years (such as "0 0 30 2 *").
func (s *Schedule) Next(t time.Time) time.Time {
	return s.spec.Next(t.In(s.loc))
}

// Due is what a schedule has due at an instant.
type Due struct {
	// Time is the most recent scheduled time in (since, now]; zero when
	// none is.
	Time time.Time
	// Missed counts the scheduled times in (since, now] before Time, up to
	// MaxMissed; TooMany says there were more.
	Missed  int
	TooMany bool
	// Next is the first scheduled time after now (zero: none within five
	// years).
	Next time.Time
}

// DueAt finds what is due at now when nothing was scheduled after since
// (the last scheduled time, or when the schedule was created) and times
// before notBefore are too late to start (zero: no starting deadline).
// The work is bounded whatever the gap: counting stops at MaxMissed, and
// the most recent time is found by searching back from now.
func (s *Schedule) DueAt(since, now, notBefore time.Time) Due {
	if notBefore.After(since) {
		since = notBefore
	}
	d := Due{Next: s.Next(now)}
	first := s.Next(since)
	if first.IsZero() || first.After(now) {
		return d
	}
	// The most recent time: the last scheduled time after a start point
	// far enough back to hold one, found by doubling the window.
	from := since
	for w := time.Minute; w < maxWindow; w *= 2 {
		p := now.Add(-w)
		if !p.After(since) {
			break
		}
		if t := s.Next(p); !t.IsZero() && !t.After(now) {
			from = p
			break
		}
	}
	for t := s.Next(from); !t.IsZero() && !t.After(now); t = s.Next(t) {
		d.Time = t
	}
	// The missed ones: those from since up to the most recent, counted up
	// to MaxMissed.
	for t := first; t.Before(d.Time); t = s.Next(t) {
		if d.Missed == MaxMissed {
			d.TooMany = true
			break
		}
		d.Missed++
	}
	return d
}
