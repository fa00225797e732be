package exchange

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
)

// probesAt simulates requests sent at the given runner instants, each
// answered after rtt and stamped halfway by a server whose clock is the
// runner's minus offset.
func probesAt(offset, rtt time.Duration, sent ...time.Time) []clockSample {
	var out []clockSample
	for _, s := range sent {
		stamp := s.Add(rtt / 2).Add(-offset)
		out = append(out, clockSample{sent: s, received: s.Add(rtt), date: stamp.Truncate(time.Second)})
	}
	return out
}

func TestEstimateOffset(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	at := func(ms ...int) []time.Time {
		var out []time.Time
		for _, m := range ms {
			out = append(out, t0.Add(time.Duration(m)*time.Millisecond))
		}
		return out
	}
	cases := []struct {
		name      string
		samples   []clockSample
		want      time.Duration // the true offset
		maxUncert time.Duration
		wantErr   string
	}{
		{"no samples", nil, 0, 0, "no answer"},
		{"one sample: within a second", probesAt(300*time.Millisecond, 2*time.Millisecond, at(0)...), 300 * time.Millisecond, 501 * time.Millisecond, ""},
		// Runner 2.3 s ahead: the server's second changes at runner time
		// 300 ms; requests 2 ms long, back to back, around it.
		{"change between back-to-back requests", probesAt(2300*time.Millisecond, 2*time.Millisecond, at(296, 298, 300, 302)...),
			2300 * time.Millisecond, 2 * time.Millisecond, ""},
		{"runner behind", probesAt(-1700*time.Millisecond, time.Millisecond, at(0, 100, 200, 290, 291, 292, 293, 294, 295, 296, 297, 298, 299, 300, 301, 302, 303)...),
			-1700 * time.Millisecond, time.Millisecond, ""},
		{"coarse then fine sweep", probesAt(40*time.Millisecond, 4*time.Millisecond, at(0, 50, 1030, 1035, 1038, 1042)...),
			40 * time.Millisecond, 5 * time.Millisecond, ""},
		{"contradictory dates", []clockSample{
			{sent: t0, received: t0.Add(time.Millisecond), date: t0},
			{sent: t0.Add(2 * time.Millisecond), received: t0.Add(3 * time.Millisecond), date: t0.Add(5 * time.Second)},
		}, 0, 0, "contradict"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			off, unc, err := estimateOffset(c.samples)
			if wantErr(t, err, c.wantErr) {
				return
			}
			if d := (off - c.want).Abs(); d > unc {
				t.Fatalf("estimate %s ± %s, true offset %s", off, unc, c.want)
			}
			if unc > c.maxUncert {
				t.Fatalf("uncertainty %s, want at most %s", unc, c.maxUncert)
			}
		})
	}
}

// TestClockOffsetOverHTTP measures, through the clientset as a runner
// does, a server whose Date header comes from a deliberately shifted clock.
func TestClockOffsetOverHTTP(t *testing.T) {
	cases := []struct {
		name        string
		serverShift time.Duration // server clock minus real time
		runnerShift time.Duration // runner clock minus real time
		noDate      bool
		wantErr     string
	}{
		{"same clock", 0, 0, false, ""},
		{"server ahead", 1317 * time.Millisecond, 0, false, ""},
		{"server behind, runner ahead", -750 * time.Millisecond, 2 * time.Second, false, ""},
		{"no Date header", 0, 0, true, "no Date header"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var requests atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/version" {
					http.NotFound(w, r)
					return
				}
				requests.Add(1)
				if c.noDate {
					w.Header()["Date"] = nil
				} else {
					w.Header().Set("Date", time.Now().Add(c.serverShift).UTC().Format(http.TimeFormat))
				}
				_, _ = w.Write([]byte(`{"major":"1","minor":"33"}`))
			}))
			defer srv.Close()
			cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			x := &Client{Clientset: cs, Now: func() time.Time { return time.Now().Add(c.runnerShift) }}
			start := time.Now()
			off, unc, err := x.ClockOffset(context.Background())
			if wantErr(t, err, c.wantErr) {
				return
			}
			want := c.runnerShift - c.serverShift
			t.Logf("offset %s ± %s (true %s) in %s, %d requests", off, unc, want, time.Since(start).Round(time.Millisecond), requests.Load())
			if (off - want).Abs() > unc {
				t.Fatalf("measured %s ± %s, true offset %s", off, unc, want)
			}
			if unc > 100*time.Millisecond {
				t.Fatalf("uncertainty %s", unc)
			}
			if n := requests.Load(); n > int32(defaultClockProbe.requests) || time.Since(start) > 3500*time.Millisecond {
				t.Fatalf("%d requests over %s", n, time.Since(start))
			}
		})
	}
}

func TestClockOffsetWithoutHTTPClient(t *testing.T) {
	x := &Client{Clientset: fake.NewClientset()}
	if _, _, err := x.ClockOffset(context.Background()); err == nil || !strings.Contains(err.Error(), "no HTTP client") {
		t.Fatalf("got %v", err)
	}
}
