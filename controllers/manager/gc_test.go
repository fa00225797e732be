package manager

import (
	"runtime/debug"
	"testing"
)

func TestTuneGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	for _, c := range []struct {
		name, env string
		want      int
	}{
		{"unset: the manager's own", "", GCPercent},
		{"GOGC wins", "150", 150},
		{"off stays off", "off", -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("GOGC", c.env)
			if c.env != "" {
				// The runtime reads GOGC at start only: stand in for it.
				debug.SetGCPercent(c.want)
			}
			if got := TuneGC(); got != c.want {
				t.Errorf("TuneGC() = %d, want %d", got, c.want)
			}
			if got := debug.SetGCPercent(c.want); got != c.want {
				t.Errorf("GC percent in force %d, want %d", got, c.want)
			}
		})
	}
}
