package main

import (
	"strings"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestParseBehaviour(t *testing.T) {
	for _, tc := range []struct {
		name    string
		params  map[string]string
		delay   map[opKind]time.Duration
		serial  bool
		wantErr string
	}{
		{"none", nil, map[opKind]time.Duration{}, false, ""},
		{"pass through", map[string]string{"csi.storage.k8s.io/fstype": "ext4", "tier": "gold"}, map[opKind]time.Duration{}, false, ""},
		{"every delay", map[string]string{
			"storagebench.test/delay-create": "2s", "storagebench.test/delay-delete": "1ms",
			"storagebench.test/delay-snapshot": "3s", "storagebench.test/delay-clone": "1m",
			"storagebench.test/delay-expand": "0s", "storagebench.test/delay-publish": "1h",
		}, map[opKind]time.Duration{opCreate: 2 * time.Second, opDelete: time.Millisecond, opSnapshot: 3 * time.Second,
			opClone: time.Minute, opExpand: 0, opPublish: time.Hour}, false, ""},
		{"serial", map[string]string{"storagebench.test/serial": "true"}, map[opKind]time.Duration{}, true, ""},
		{"not serial", map[string]string{"storagebench.test/serial": "false"}, map[opKind]time.Duration{}, false, ""},
		{"bad serial", map[string]string{"storagebench.test/serial": "yes please"}, nil, false, "storagebench.test/serial"},
		{"unknown key", map[string]string{"storagebench.test/speed": "fast"}, nil, false, "unknown parameter storagebench.test/speed"},
		{"unknown op", map[string]string{"storagebench.test/delay-lunch": "1s"}, nil, false, "unknown parameter storagebench.test/delay-lunch"},
		{"bad duration", map[string]string{"storagebench.test/delay-create": "2"}, nil, false, "storagebench.test/delay-create"},
		{"negative", map[string]string{"storagebench.test/delay-expand": "-1s"}, nil, false, "storagebench.test/delay-expand"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := parseBehaviour(tc.params)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if b.serial != tc.serial || len(b.delay) != len(tc.delay) {
				t.Fatalf("behaviour %+v, want delays %v serial %t", b, tc.delay, tc.serial)
			}
			for k, d := range tc.delay {
				if b.delay[k] != d {
					t.Errorf("delay %s %v, want %v", k, b.delay[k], d)
				}
			}
		})
	}
}

func TestCheckName(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"pvc-0f9a7c1e-5b1d-4c1e-9a7e-1b2c3d4e5f60", true},
		{"snapshot-1.2_3", true},
		{"a..b", true},
		{strings.Repeat("a", 128), true},
		{strings.Repeat("a", 129), false},
		{"", false},
		{".", false},
		{"..", false},
		{"../x", false},
		{"x/../../y", false},
		{"/abs", false},
		{".hidden", false},
		{"-flag", false},
		{"a b", false},
		{"a\x00b", false},
	} {
		err := checkName("name", tc.name)
		if (err == nil) != tc.ok {
			t.Errorf("checkName(%q) = %v, want ok %t", tc.name, err, tc.ok)
		}
		if err != nil && status.Code(err) != codes.InvalidArgument {
			t.Errorf("checkName(%q): code %s", tc.name, status.Code(err))
		}
	}
}

func TestCapacityOf(t *testing.T) {
	for _, tc := range []struct {
		req, limit, fallback, want int64
		code                       codes.Code
	}{
		{0, 0, 5, 5, codes.OK},
		{3, 0, 5, 3, codes.OK},
		{3, 4, 5, 3, codes.OK},
		{0, 4, 5, 4, codes.OK},
		{4, 3, 5, 0, codes.InvalidArgument},
		{-1, 0, 5, 0, codes.InvalidArgument},
	} {
		r := &csi.CapacityRange{RequiredBytes: tc.req, LimitBytes: tc.limit}
		got, err := capacityOf(r, tc.fallback)
		if got != tc.want || status.Code(err) != tc.code {
			t.Errorf("capacityOf(%v, %d) = %d, %v; want %d, %s", r, tc.fallback, got, err, tc.want, tc.code)
		}
	}
}

func TestCheckCapabilities(t *testing.T) {
	type caps = []*csi.VolumeCapability
	const (
		rwx    = csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER
		rwop   = csi.VolumeCapability_AccessMode_SINGLE_NODE_SINGLE_WRITER
		rox    = csi.VolumeCapability_AccessMode_MULTI_NODE_READER_ONLY
		shared = csi.VolumeCapability_AccessMode_SINGLE_NODE_MULTI_WRITER
	)
	for _, tc := range []struct {
		name  string
		caps  caps
		block bool
		ok    bool
	}{
		{"none", nil, false, false},
		{"filesystem rwo", caps{mountCap(rwo)}, false, true},
		{"filesystem rwx", caps{mountCap(rwx), mountCap(shared)}, false, true},
		{"filesystem rox", caps{mountCap(rox)}, false, false},
		{"block rwop", caps{blockCap(rwop)}, true, true},
		{"block rwx", caps{blockCap(rwx)}, true, false},
		{"mixed", caps{mountCap(rwo), blockCap(rwo)}, false, false},
		{"no access type", caps{{AccessMode: &csi.VolumeCapability_AccessMode{Mode: rwo}}}, false, false},
	} {
		block, err := checkCapabilities(tc.caps)
		if (err == nil) != tc.ok || (tc.ok && block != tc.block) {
			t.Errorf("%s: block %t, %v", tc.name, block, err)
		}
	}
}

// An object's key is taken once exclusively or many times shared; a taken
// key is Aborted; a released key is free again.
func TestKeyLocks(t *testing.T) {
	l := keyLocks{m: map[string]*keyLock{}}
	r1, err := l.lock("v", true)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := l.lock("v", true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.lock("v", false); status.Code(err) != codes.Aborted {
		t.Fatalf("exclusive over shared: %v", err)
	}
	r1()
	r2()
	r3, err := l.lock("v", false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.lock("v", true); status.Code(err) != codes.Aborted {
		t.Fatalf("shared over exclusive: %v", err)
	}
	r3()
	if len(l.m) != 0 {
		t.Errorf("keys left: %v", l.m)
	}
}

func TestParseMedium(t *testing.T) {
	for _, tc := range []struct {
		params  map[string]string
		memory  bool
		wantErr string
	}{
		{nil, false, ""},
		{map[string]string{"storagebench.test/medium": "disk"}, false, ""},
		{map[string]string{"storagebench.test/medium": "memory", "storagebench.test/delay-create": "1s"}, true, ""},
		{map[string]string{"storagebench.test/medium": "Memory"}, false, `parameter storagebench.test/medium: "Memory" is neither "disk" nor "memory"`},
		{map[string]string{"storagebench.test/medium": ""}, false, "storagebench.test/medium"},
		{map[string]string{"storagebench.test/media": "memory"}, false, "unknown parameter storagebench.test/media"},
	} {
		b, err := parseBehaviour(tc.params)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%v: err %v, want %q", tc.params, err, tc.wantErr)
			}
			continue
		}
		if err != nil || b.memory != tc.memory {
			t.Errorf("%v: memory %t, %v; want %t", tc.params, b.memory, err, tc.memory)
		}
	}
}

func TestMemoryLimitFlag(t *testing.T) {
	for _, tc := range []struct {
		flag string
		want int64
		ok   bool
	}{
		{"4Gi", 4 << 30, true},
		{"64Mi", 64 << 20, true},
		{"1000", 1000, true},
		{"0", 0, true},
		{"-1Gi", 0, false},
		{"lots", 0, false},
	} {
		got, err := memoryLimit(tc.flag)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("memoryLimit(%q) = %d, %v; want %d, ok %t", tc.flag, got, err, tc.want, tc.ok)
		}
	}
	total, err := memTotal()
	if err != nil || total <= 0 {
		t.Fatalf("memTotal: %d, %v", total, err)
	}
	if got, err := memoryLimit(""); err != nil || got != total/4 {
		t.Errorf("default limit %d, %v; want a quarter of %d", got, err, total)
	}
}
