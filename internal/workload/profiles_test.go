package workload

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestProfilesMatchMethodology(t *testing.T) {
	tests := []struct {
		name    string
		bs      int64
		read    int32
		pattern Pattern
		source  string
	}{
		{"oltp", 8 << 10, 80, Random, "TR-4816"},
		{"oltp-90-10", 8 << 10, 90, Random, "TR-4383"},
		{"oltp-70-30", 8 << 10, 70, Random, "Fujitsu"},
		{"streaming-read", 64 << 10, 100, Sequential, "TR-4816"},
		{"streaming-write", 64 << 10, 0, Sequential, "Fujitsu"},
		{"mixed", 16 << 10, 50, Random, "TR-4816"},
		{"analytics", 16 << 10, 50, Random, "Fujitsu"},
		{"mongodb", 8 << 10, 100, Sequential, "TR-4383"},
		{"mongodb-update", 8 << 10, 50, Sequential, "TR-4383"},
		{"seq-read", 64 << 10, 100, Sequential, "block"},
		{"seq-write", 64 << 10, 0, Sequential, "block"},
		{"rand-read", 8 << 10, 100, Random, "block"},
		{"rand-write", 8 << 10, 0, Random, "block"},
		{"mix-4k-100", 4 << 10, 100, Random, "performance page"},
		{"mix-4k-25", 4 << 10, 25, Random, "performance page"},
		{"mix-8k-75", 8 << 10, 75, Random, "performance page"},
		{"mix-64k-50", 64 << 10, 50, Sequential, "performance page"},
		{"mix-256k-0", 256 << 10, 0, Sequential, "performance page"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, ok := Lookup(tt.name)
			if !ok {
				t.Fatalf("Lookup(%q) not found", tt.name)
			}
			s := p.Spec
			if s.BlockSizeBytes != tt.bs || s.ReadPercent != tt.read || s.Pattern != tt.pattern {
				t.Errorf("spec = %d B %d%% %s, want %d B %d%% %s", s.BlockSizeBytes, s.ReadPercent, s.Pattern, tt.bs, tt.read, tt.pattern)
			}
			if !strings.Contains(p.Source, tt.source) {
				t.Errorf("Source = %q, want it to mention %q", p.Source, tt.source)
			}
			if s.IODepth != 16 || s.IOEngine != LibAIO || !s.Direct || s.WorkingSetBytesPerClient != 1<<30 || s.CompressPercent != 0 {
				t.Errorf("defaults = %+v", s)
			}
		})
	}
}

// TestSyncedLogProfiles: the log profiles write sequentially through the
// page cache, one write at a time, each made durable by fdatasync.
func TestSyncedLogProfiles(t *testing.T) {
	for name, bs := range map[string]int64{"db-log": 8 << 10, "etcd": 4 << 10} {
		p, ok := Lookup(name)
		if !ok {
			t.Fatalf("no profile %s", name)
		}
		want := Spec{BlockSizeBytes: bs, ReadPercent: 0, Pattern: Sequential, IODepth: 1, IOEngine: Sync, Direct: false,
			WorkingSetBytesPerClient: 1 << 30, Sync: Fdatasync, SyncEvery: 1}
		if p.Spec != want {
			t.Errorf("%s: %+v, want %+v", name, p.Spec, want)
		}
	}
}

// TestSyncRules: the sync mode, its count and the dedupe share, each
// refused with its own field and reason.
func TestSyncRules(t *testing.T) {
	log, _ := Lookup("db-log")
	for _, c := range []struct {
		name string
		o    Overrides
		want string // "" valid
	}{
		{"the profile", Overrides{}, ""},
		{"fsync every 32 writes", Overrides{Sync: ptr(Fsync), SyncEvery: ptr(int32(32))}, ""},
		{"dsync clears the count", Overrides{Sync: ptr(DSync)}, ""},
		{"no sync clears the count", Overrides{Sync: ptr(NoSync)}, ""},
		{"dsync with a count", Overrides{Sync: ptr(DSync), SyncEvery: ptr(int32(2))}, "workload.syncEvery: 2 is not allowed: is set only with sync fsync or fdatasync: with dsync every write is durable on its own"},
		{"a count of 0", Overrides{SyncEvery: ptr(int32(0))}, "workload.syncEvery: 0 is not allowed: must be between 1 and 1048576 writes per fdatasync"},
		{"an unknown mode", Overrides{Sync: ptr(SyncMode("osync"))}, `workload.sync: "osync" is not allowed: must be one of fsync, fdatasync, dsync, or unset`},
		{"sync without writes", Overrides{ReadPercent: ptr(int32(100))}, "workload.sync: fdatasync is not allowed: needs writes: readPercent must be below 100"},
		{"all writes repeat", Overrides{DedupePercent: ptr(int32(100))}, ""},
		{"dedupe above 100", Overrides{DedupePercent: ptr(int32(101))}, "workload.dedupePercent: 101 is not allowed: must be between 0 (no repeated buffers) and 100"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := Validate(c.o.Apply(log.Spec))
			if c.want == "" && err != nil || c.want != "" && (err == nil || err.Error() != c.want) {
				t.Errorf("got %v, want %q", err, c.want)
			}
		})
	}
}

func TestProfilesAllValidAndSorted(t *testing.T) {
	ps := Profiles()
	if len(ps) != 15+20 {
		t.Errorf("len(Profiles()) = %d, want 35", len(ps))
	}
	for i, p := range ps {
		if err := Validate(p.Spec); err != nil {
			t.Errorf("profile %s invalid: %v", p.Name, err)
		}
		if p.Description == "" || p.Source == "" {
			t.Errorf("profile %s lacks description or source", p.Name)
		}
		if i > 0 && ps[i-1].Name >= p.Name {
			t.Errorf("Profiles() not sorted: %s before %s", ps[i-1].Name, p.Name)
		}
	}
	ps[0].Name = "mutated"
	if Profiles()[0].Name == "mutated" {
		t.Error("Profiles() exposes internal state")
	}
	names := ProfileNames()
	if len(names) != len(ps) || !slices.IsSorted(names) {
		t.Errorf("ProfileNames() = %v", names)
	}
}

func TestSuites(t *testing.T) {
	if got, want := FourCorners(), []string{"seq-read", "seq-write", "rand-read", "rand-write"}; !slices.Equal(got, want) {
		t.Errorf("FourCorners() = %v, want %v", got, want)
	}
	sweep := MixSweep()
	if len(sweep) != 20 || sweep[0] != "mix-4k-100" || sweep[1] != "mix-4k-75" || sweep[19] != "mix-256k-0" {
		t.Errorf("MixSweep() = %v", sweep)
	}
	for _, n := range append(FourCorners(), sweep...) {
		if _, ok := Lookup(n); !ok {
			t.Errorf("suite profile %q not found", n)
		}
	}
	fc := FourCorners()
	fc[0] = "x"
	if FourCorners()[0] != "seq-read" {
		t.Error("FourCorners() exposes internal state")
	}
}

func ptr[T any](v T) *T { return &v }

func TestResolve(t *testing.T) {
	tests := []struct {
		name      string
		profile   string
		o         Overrides
		want      Spec
		wantField string
		wantIn    string
	}{
		{name: "base", want: BaseSpec()},
		{name: "profile", profile: "oltp", want: spec(8<<10, 80, Random)},
		{name: "override block size and depth", profile: "oltp",
			o:    Overrides{BlockSizeBytes: ptr(int64(4096)), IODepth: ptr(int32(64))},
			want: func() Spec { s := spec(4096, 80, Random); s.IODepth = 64; return s }()},
		{name: "override every field", profile: "seq-read",
			o: Overrides{BlockSizeBytes: ptr(int64(1 << 20)), ReadPercent: ptr(int32(30)), Pattern: ptr(Random),
				IODepth: ptr(int32(1)), IOEngine: ptr(PSync), Direct: ptr(false),
				WorkingSetBytesPerClient: ptr(int64(8 << 30)), CompressPercent: ptr(int32(50))},
			want: Spec{BlockSizeBytes: 1 << 20, ReadPercent: 30, Pattern: Random, IODepth: 1, IOEngine: PSync,
				Direct: false, WorkingSetBytesPerClient: 8 << 30, CompressPercent: 50}},
		{name: "base with overrides", o: Overrides{ReadPercent: ptr(int32(0))},
			want: func() Spec { s := BaseSpec(); s.ReadPercent = 0; return s }()},
		{name: "unknown profile", profile: "four-corners", wantField: "workload.profile",
			wantIn: `workload.profile: "four-corners" is not allowed: must be one of analytics, db-log, etcd, mix-256k-0,`},
		{name: "override makes it invalid", profile: "oltp", o: Overrides{IOEngine: ptr(PSync)},
			wantField: "workload.ioDepth", wantIn: "must be 1 with ioEngine psync"},
		{name: "buffered libaio", profile: "mixed", o: Overrides{Direct: ptr(false)}, wantField: "workload.direct"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Resolve(tt.profile, tt.o)
			if tt.wantField != "" {
				var fe *FieldError
				if !errors.As(err, &fe) || fe.Field != tt.wantField {
					t.Fatalf("Resolve() error = %v, want FieldError on %s", err, tt.wantField)
				}
				if !strings.Contains(err.Error(), tt.wantIn) {
					t.Errorf("message %q does not contain %q", err, tt.wantIn)
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve() error = %v", err)
			}
			if got != tt.want {
				t.Errorf("Resolve() = %+v, want %+v", got, tt.want)
			}
		})
	}
	// Resolve must not mutate the stored profile.
	if _, err := Resolve("oltp", Overrides{ReadPercent: ptr(int32(10))}); err != nil {
		t.Fatal(err)
	}
	if p, _ := Lookup("oltp"); p.Spec.ReadPercent != 80 {
		t.Errorf("Resolve mutated the profile: %+v", p.Spec)
	}
}
