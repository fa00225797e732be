package schedule

import (
	"errors"
	"testing"
	"time"
)

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		spec, zone string
		ok         bool
	}{
		{"0 * * * *", "", true},
		{"@hourly", "", true},
		{"*/15 9-17 * * 1-5", "Europe/Berlin", true},
		{"0 * * * * *", "", false}, // six fields: seconds are not cron's
		{"61 * * * *", "", false},
		{"TZ=UTC 0 * * * *", "", false},
		{"CRON_TZ=Europe/Berlin 0 * * * *", "", false},
		{"0 * * * *", "Mars/Olympus_Mons", false},
		{"", "", false},
	} {
		_, err := Parse(tc.spec, tc.zone)
		if tc.ok != (err == nil) || (err != nil && !errors.Is(err, ErrInvalid)) {
			t.Errorf("Parse(%q, %q) error %v, want ok %v", tc.spec, tc.zone, err, tc.ok)
		}
	}
}

func TestDueAt(t *testing.T) {
	hourly, _ := Parse("0 * * * *", "")
	minutely, _ := Parse("* * * * *", "")
	irregular, _ := Parse("0 1-5 * * *", "")
	berlin, _ := Parse("0 9 * * *", "Europe/Berlin")
	never, _ := Parse("0 0 30 2 *", "")
	var none time.Time
	for _, tc := range []struct {
		name                 string
		s                    *Schedule
		since, now, notBefor string
		want                 Due
	}{
		{"nothing due yet", hourly, "2026-05-01T10:00:00Z", "2026-05-01T10:30:00Z", "",
			Due{Next: at("2026-05-01T11:00:00Z")}},
		{"due exactly now", hourly, "2026-05-01T10:00:00Z", "2026-05-01T11:00:00Z", "",
			Due{Time: at("2026-05-01T11:00:00Z"), Next: at("2026-05-01T12:00:00Z")}},
		{"two missed: only the most recent is due", hourly, "2026-05-01T10:00:00Z", "2026-05-01T13:30:00Z", "",
			Due{Time: at("2026-05-01T13:00:00Z"), Missed: 2, Next: at("2026-05-01T14:00:00Z")}},
		{"a starting deadline drops what is too late", hourly, "2026-05-01T10:00:00Z", "2026-05-01T13:30:00Z", "2026-05-01T13:20:00Z",
			Due{Next: at("2026-05-01T14:00:00Z")}},
		{"within the starting deadline", hourly, "2026-05-01T10:00:00Z", "2026-05-01T13:30:00Z", "2026-05-01T12:50:00Z",
			Due{Time: at("2026-05-01T13:00:00Z"), Next: at("2026-05-01T14:00:00Z")}},
		{"a year of minutes missed: too many, the last is due", minutely, "2025-05-01T10:00:00Z", "2026-05-01T10:00:30Z", "",
			Due{Time: at("2026-05-01T10:00:00Z"), Missed: MaxMissed, TooMany: true, Next: at("2026-05-01T10:01:00Z")}},
		{"irregular gaps", irregular, "2026-05-01T05:00:00Z", "2026-05-02T03:30:00Z", "",
			Due{Time: at("2026-05-02T03:00:00Z"), Missed: 2, Next: at("2026-05-02T04:00:00Z")}},
		{"the schedule's own time zone", berlin, "2026-06-30T08:00:00Z", "2026-07-01T07:30:00Z", "",
			Due{Time: at("2026-07-01T07:00:00Z"), Next: at("2026-07-02T07:00:00Z")}},
		{"the clock went back before the last run", hourly, "2026-05-01T13:00:00Z", "2026-05-01T11:30:00Z", "",
			Due{Next: at("2026-05-01T12:00:00Z")}},
		{"a schedule that never fires", never, "2026-05-01T10:00:00Z", "2027-05-01T10:00:00Z", "",
			Due{Next: none}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var nb time.Time
			if tc.notBefor != "" {
				nb = at(tc.notBefor)
			}
			got := tc.s.DueAt(at(tc.since), at(tc.now), nb)
			if !got.Time.Equal(tc.want.Time) || !got.Next.Equal(tc.want.Next) || got.Missed != tc.want.Missed || got.TooMany != tc.want.TooMany {
				t.Errorf("DueAt = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// BenchmarkDueAtAfterAYear: a minutely schedule a year behind costs a
// bounded search, not a walk over half a million minutes.
func BenchmarkDueAtAfterAYear(b *testing.B) {
	s, _ := Parse("* * * * *", "")
	since, now := at("2025-05-01T10:00:00Z"), at("2026-05-01T10:00:30Z")
	for b.Loop() {
		s.DueAt(since, now, time.Time{})
	}
}
