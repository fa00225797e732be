package backend

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func TestSelectorEscapesEveryName(t *testing.T) {
	for _, tc := range []struct {
		name string
		t    Target
		want string
	}{
		{"one volume", Target{Volumes: []string{"trident_pvc_1"}}, `volume=~"trident_pvc_1"`},
		{"two and an svm", Target{Volumes: []string{"a", "b"}, SVM: "svm1"}, `volume=~"a|b",svm="svm1"`},
		{"regex and quote characters", Target{Volumes: []string{`x.*|y"`}, SVM: `s"}`}, `volume=~"x\\.\\*\\|y\"",svm="s\"}"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.t.Selector(); got != tc.want {
				t.Errorf("Selector() = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestWindowOf(t *testing.T) {
	start := time.Date(2026, 11, 28, 5, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name                       string
		ramp, measured, resolution time.Duration
		wantOK                     bool
		wantRange                  time.Duration
	}{
		{"two resolutions: one complete sample at least", 5 * time.Second, 2 * time.Minute, time.Minute, true, time.Minute},
		{"just short of two", 5 * time.Second, 2*time.Minute - time.Second, time.Minute, false, 59 * time.Second},
		{"Harvest's default against a default step", 5 * time.Second, time.Minute, time.Minute, false, 0},
		{"a fast source", 2 * time.Second, 20 * time.Second, time.Second, true, 19 * time.Second},
		{"no resolution is no source", 0, time.Minute, 0, false, time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, ok := WindowOf(start, tc.ramp, tc.measured, tc.resolution)
			if ok != tc.wantOK || w.Range != tc.wantRange {
				t.Errorf("WindowOf = %+v, %v; want range %v, %v", w, ok, tc.wantRange, tc.wantOK)
			}
			if want := start.Add(tc.ramp + tc.measured); !w.End.Equal(want) {
				t.Errorf("End = %v, want the measured window's end %v", w.End, want)
			}
			if due := Due(w, tc.resolution); due.Before(w.End.Add(2 * tc.resolution)) {
				t.Errorf("Due = %v: before a sample covering the end can be stored", due)
			}
		})
	}
}

func TestQueries(t *testing.T) {
	w := Window{End: time.Unix(1000, 0), Range: 57500 * time.Millisecond}
	means, samples := Queries(Target{Volumes: []string{"v1"}, SVM: "s"}, w)
	if len(means) != len(Metrics) {
		t.Fatalf("%d queries, want one per metric (%d)", len(means), len(Metrics))
	}
	if got, want := means[ReadLatency], `avg_over_time(volume_read_latency{volume=~"v1",svm="s"}[57500ms])`; got != want {
		t.Errorf("read latency query = %s, want %s", got, want)
	}
	if want := `count_over_time(volume_read_ops{volume=~"v1",svm="s"}[57500ms])`; samples != want {
		t.Errorf("samples query = %s, want %s", samples, want)
	}
}

func TestJoin(t *testing.T) {
	two := Target{Volumes: []string{"a", "b"}, SVM: "s"}
	full := func(a, b [6]float64) map[string][]Sample {
		m := map[string][]Sample{}
		for i, metric := range Metrics {
			m[metric] = []Sample{{Volume: "a", SVM: "s", Value: a[i]}, {Volume: "b", SVM: "s", Value: b[i]}}
		}
		return m
	}
	counts := []Sample{{Volume: "a", SVM: "s", Value: 5}, {Volume: "b", SVM: "s", Value: 4}}
	// a: 300 reads at 100 µs, 100 writes at 400 µs; b: 100 reads at 500 µs, no writes.
	a := [6]float64{300, 100, 300 * 4096, 100 * 4096, 100, 400}
	b := [6]float64{100, 0, 100 * 4096, 0, 500, 0}
	for _, tc := range []struct {
		name    string
		t       Target
		means   map[string][]Sample
		counts  []Sample
		want    Figures
		wantErr string
	}{
		{
			name: "sums rates and weights latency by operations", t: two, means: full(a, b), counts: counts,
			want: Figures{ReadIOPS: 400, WriteIOPS: 100, ReadBytes: 400 * 4096, WriteBytes: 100 * 4096,
				ReadLatency:  200 * time.Microsecond, // (300×100 + 100×500) / 400
				WriteLatency: 400 * time.Microsecond, // b wrote nothing: a's alone
				Latency:      240 * time.Microsecond, // (30000 + 50000 + 40000) / 500
				Samples:      4},
		},
		{
			name: "a latency left out (too few operations to time) weighs nothing", t: two,
			means: func() map[string][]Sample {
				m := full(a, b)
				m[WriteLatency] = m[WriteLatency][:1]
				return m
			}(), counts: counts,
			want: Figures{ReadIOPS: 400, WriteIOPS: 100, ReadBytes: 400 * 4096, WriteBytes: 100 * 4096,
				ReadLatency: 200 * time.Microsecond, WriteLatency: 400 * time.Microsecond, Latency: 240 * time.Microsecond, Samples: 4},
		},
		{
			name: "no operations, no latency", t: Target{Volumes: []string{"a"}, SVM: "s"},
			means: func() map[string][]Sample {
				m := full([6]float64{}, [6]float64{})
				for k, v := range m {
					m[k] = v[:1]
				}
				return m
			}(), counts: counts[:1],
			want: Figures{Samples: 5},
		},
		{
			name: "a latency over no operations (0/0, NaN) is none", t: two,
			means: func() map[string][]Sample {
				m := full(a, b)
				m[WriteLatency][1].Value = math.NaN() // b wrote nothing
				return m
			}(), counts: counts,
			want: Figures{ReadIOPS: 400, WriteIOPS: 100, ReadBytes: 400 * 4096, WriteBytes: 100 * 4096,
				ReadLatency: 200 * time.Microsecond, WriteLatency: 400 * time.Microsecond, Latency: 240 * time.Microsecond, Samples: 4},
		},
		{
			name: "a volume without its rates", t: two,
			means: func() map[string][]Sample {
				m := full(a, b)
				m[ReadOps] = m[ReadOps][:1]
				return m
			}(), counts: counts, wantErr: `volume_read_ops of volume "b": no series`,
		},
		{
			name: "the same volume from two sources", t: two,
			means: func() map[string][]Sample {
				m := full(a, b)
				m[WriteData] = append(m[WriteData], Sample{Volume: "a", SVM: "s", Value: 1})
				return m
			}(), counts: counts, wantErr: "more than one series for volume \"a\"",
		},
		{
			name: "a series nobody asked for", t: two,
			means: func() map[string][]Sample {
				m := full(a, b)
				m[ReadData] = append(m[ReadData], Sample{Volume: "c", SVM: "s"})
				return m
			}(), counts: counts, wantErr: `a series of volume "c"`,
		},
		{
			name: "another svm's volume of the same name", t: two,
			means: func() map[string][]Sample {
				m := full(a, b)
				m[ReadOps][0].SVM = "other"
				return m
			}(), counts: counts, wantErr: `(svm "other")`,
		},
		{
			name: "not a rate", t: two,
			means: func() map[string][]Sample {
				m := full(a, b)
				m[ReadOps][1].Value = math.NaN()
				return m
			}(), counts: counts, wantErr: "not a rate",
		},
		{
			name: "no sample count", t: two, means: full(a, b), counts: counts[:1], wantErr: "no series",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Join(tc.t, tc.means, tc.counts)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Join error = %v, want one containing %q", err, tc.wantErr)
				}
				if strings.Contains(tc.wantErr, "no series") && !errors.Is(err, ErrNoSeries) {
					t.Errorf("Join error %v is not ErrNoSeries", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Join: %v", err)
			}
			if got != tc.want {
				t.Errorf("Join =\n%+v, want\n%+v", got, tc.want)
			}
		})
	}
}
