package volops

import (
	"strings"
	"testing"
	"time"
)

func TestAdmit(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	run := func(key, class string, min int, running bool) Run {
		ns, name, _ := strings.Cut(key, "/")
		return Run{Namespace: ns, Name: name, Class: class, Created: t0.Add(time.Duration(min) * time.Minute), Running: running}
	}
	for _, c := range []struct {
		name   string
		w      Run
		others []Run
		max    int
		ok     bool
		why    string
	}{
		{"alone", run("a/x", "gold", 5, false), nil, 2, true, ""},
		{"another class runs", run("a/x", "gold", 5, false), []Run{run("b/y", "silver", 1, true)}, 2, true, ""},
		{"its class runs, in another namespace: not named", run("a/x", "gold", 5, false), []Run{run("b/y", "gold", 1, true)}, 2, false, "a run of another namespace runs on StorageClass gold"},
		{"its class runs, in its namespace: named", run("a/x", "gold", 5, false), []Run{run("a/y", "gold", 1, true)}, 2, false, "y runs on StorageClass gold"},
		{"the most run", run("a/x", "gold", 5, false), []Run{run("b/y", "silver", 1, true), run("c/z", "bronze", 2, true)}, 2, false, "2 operations benchmarks run"},
		{"an older one could start", run("a/x", "gold", 5, false), []Run{run("b/y", "silver", 1, false)}, 2, false, "a run of another namespace waits longer"},
		{"an older one waits for its class", run("a/x", "gold", 5, false), []Run{run("b/y", "silver", 1, false), run("c/z", "silver", 0, true)}, 3, true, ""},
		{"a newer one waits too", run("a/x", "gold", 5, false), []Run{run("b/y", "silver", 9, false)}, 2, true, ""},
		{"created together: by key", run("b/x", "gold", 5, false), []Run{run("a/y", "silver", 5, false)}, 2, false, "a run of another namespace waits longer"},
		{"created together in one namespace: by name", run("a/y", "gold", 5, false), []Run{run("a/x", "silver", 5, false)}, 2, false, "x waits longer"},
		{"created together: first by key", run("a/x", "gold", 5, false), []Run{run("b/y", "silver", 5, false)}, 2, true, ""},
		{"itself among the others", run("a/x", "gold", 5, false), []Run{run("a/x", "gold", 5, false)}, 1, true, ""},
		{"one at a time", run("a/x", "gold", 5, false), []Run{run("b/y", "silver", 1, true)}, 1, false, "1 operations benchmarks run"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ok, why := Admit(c.w, c.others, c.max)
			if ok != c.ok || !strings.HasPrefix(why, c.why) || (ok && why != "") {
				t.Fatalf("Admit = %v, %q; want %v, %q…", ok, why, c.ok, c.why)
			}
		})
	}
}
