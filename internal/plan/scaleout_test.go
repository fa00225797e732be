package plan

import (
	"reflect"
	"testing"
	"time"
)

func clientsLoad(perClient int64, steps ...int32) Load {
	return Load{Clients: &ClientSteps{Steps: steps, PerClientIOPS: perClient}, StepDuration: time.Minute}
}

// A scale-out sweep's steps: the clients that run each, and the rate each
// offers in all (per client × clients), or unthrottled.
func TestStepsClients(t *testing.T) {
	got := Steps(clientsLoad(500, 1, 2, 4))
	want := []Step{{Index: 0, ActiveClients: 1, OfferedIOPS: 500}, {Index: 1, ActiveClients: 2, OfferedIOPS: 1000}, {Index: 2, ActiveClients: 4, OfferedIOPS: 2000}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("rated: %+v, want %+v", got, want)
	}
	got = Steps(clientsLoad(0, 2, 3))
	want = []Step{{Index: 0, ActiveClients: 2, Unthrottled: true}, {Index: 1, ActiveClients: 3, Unthrottled: true}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("unthrottled: %+v, want %+v", got, want)
	}
	if got := want[0].Load(); got != "2 clients, unthrottled" {
		t.Errorf("load %q", got)
	}
	if got := Steps(clientsLoad(500, 1))[0].Load(); got != "1 client, 500 IOPS offered" {
		t.Errorf("load %q", got)
	}
}

// Divide gives a scale-out step's load to the clients that run it, exactly
// as it would divide it over a topology of those clients alone, and no
// job to the others; Outstanding counts the running clients' depth.
func TestDivideScaleOut(t *testing.T) {
	w := wl(70)
	full := topo(5, 2)
	for _, s := range Steps(clientsLoad(300, 1, 3, 5)) {
		got, err := Divide(s, full, w)
		if err != nil {
			t.Fatal(err)
		}
		n := s.Running(full)
		alone := s
		alone.ActiveClients = 0
		want, err := Divide(alone, topo(n, 2), w)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 5 || !reflect.DeepEqual(got[:n], want) {
			t.Fatalf("step %d: %+v, want %+v then idle clients", s.Index, got, want)
		}
		var total int64
		for c, jobs := range got {
			if idle := s.Idle(c, full); idle != (len(jobs) == 0) || idle != (c >= int(n)) {
				t.Errorf("step %d client %d: %d jobs, idle %v", s.Index, c, len(jobs), idle)
			}
			for _, j := range jobs {
				total += j.ReadIOPS + j.WriteIOPS
			}
		}
		if total != 300*int64(n) {
			t.Errorf("step %d: %d IOPS divided, want %d", s.Index, total, 300*int64(n))
		}
		if o := Outstanding(s, full, w); o != int64(n)*2*int64(w.IODepth) {
			t.Errorf("step %d: outstanding %d", s.Index, o)
		}
	}
	if _, err := Divide(Step{ActiveClients: 6}, full, w); err == nil {
		t.Error("6 clients of 5 divided")
	}
}

func TestValidateClientSteps(t *testing.T) {
	w := wl(70)
	for _, tc := range []struct {
		name             string
		l                Load
		wantField, inMsg string
	}{
		{"rated", clientsLoad(500, 1, 2, 4), "", ""},
		{"unthrottled", clientsLoad(0, 1, 4), "", ""},
		{"beyond clients.count", clientsLoad(500, 1, 5), "load.clients.steps[1]", "at most clients.count (4)"},
		{"not increasing", clientsLoad(500, 2, 2), "load.clients.steps[1]", "strictly increasing"},
		{"zero clients", clientsLoad(500, 0, 2), "load.clients.steps[0]", "between 1 and 1000"},
		{"no steps", clientsLoad(500), "load.clients.steps", "1 to 100 steps"},
		{"per client below a client's minimum", clientsLoad(3, 1, 2), "load.clients.perClientIOPS", "must be at least 4"},
		{"Poisson needs a rate", func() Load { l := clientsLoad(0, 1); l.Arrivals = Poisson; return l }(), "load.arrivals", "set load.clients.perClientIOPS"},
		{"saturation stop needs a rate", func() Load { l := clientsLoad(0, 1); l.Stop.SaturationPercent = 90; return l }(), "load.stop.saturationPercent", "set load.clients.perClientIOPS"},
		{"saturation stop with a rate", func() Load { l := clientsLoad(100, 1); l.Stop.SaturationPercent = 90; return l }(), "", ""},
		{"two modes", func() Load { l := clientsLoad(100, 1); l.Rate = &RateSteps{Steps: []int64{100}}; return l }(), "load", "rate and clients"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkFieldError(t, Validate(tc.l, topo(4, 2), w), tc.wantField, tc.inMsg)
		})
	}
}
