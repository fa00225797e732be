package results

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/storagebench/storagebench/internal/fio"
)

// wireCases are results the wire encoding must carry exactly.
func wireCases(t testing.TB) map[string]ClientStep {
	real20s := benchBase(t, true)
	t0 := time.Date(2026, 11, 26, 8, 0, 0, 123456789, time.UTC)
	failed := ClientStep{Client: 999, Step: 99, Jobs: 64, PlannedStart: t0, ActualStart: t0.Add(-time.Hour), End: t0,
		Error: "fio: io_u error on file /storagebench/data/x: No space left on device: write offset=0, buflen=8192 — é"}
	interrupted := real20s
	interrupted.Interrupted = true
	interrupted.PlannedStart = time.Time{}
	synced := real20s
	// The write's figures stand in for the sync calls': the same shape.
	synced.Sync = real20s.Write
	synced.Sync.Bytes, synced.Sync.BytesPerSec = 0, 0
	// A client throttled in half its periods, its fio busy 1.5 of its 2
	// CPUs, with sync calls too: the CPU follows them.
	cpu := synced
	cpu.CPU = CPU{FioUs: 30_000_000, RunUs: 20_000_000, AvailableMilli: 2000, Periods: 200, ThrottledPeriods: 100, ThrottledUs: 4_999_999}
	idle := real20s
	idle.Timeline.Idle = []Span{{StartMs: 1000, EndMs: 2500}, {StartMs: 7000, EndMs: 7001}}
	return map[string]ClientStep{
		"zero":                   {},
		"real 20 s step":         real20s,
		"no timeline":            benchBase(t, false),
		"failed, no figures":     failed,
		"interrupted, no plan":   interrupted,
		"timeline with stalls":   idle,
		"sync calls":             synced,
		"client CPU":             cpu,
		"idle":                   {Client: 7, Step: 2, PlannedStart: t0, End: t0.Add(time.Minute), Idle: true},
		"before the Unix epoch":  {PlannedStart: time.Date(1900, 1, 1, 0, 0, 0, 1, time.UTC)},
		"largest counts, floats": {Read: Operation{IOs: MaxCount, Bytes: 1<<64 - 1, IOPS: MaxFloat, BytesPerSec: 1e-300}},
	}
}

func TestWireRoundTrip(t *testing.T) {
	for name, c := range wireCases(t) {
		t.Run(name, func(t *testing.T) {
			data := AppendWire(nil, &c)
			got, err := DecodeWire(data)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c) {
				t.Fatalf("decoded\n%+v\nwant\n%+v", got, c)
			}
			// Whatever JSON a runner would have written, the wire gives the
			// same document.
			a, _ := json.Marshal(got)
			b, _ := json.Marshal(c)
			if string(a) != string(b) {
				t.Fatalf("JSON differs:\n%s\n%s", a, b)
			}
		})
	}
}

// TestWireVersion1: a runner whose conductor reads version 1 alone writes
// it, and it decodes to the same result (without sync calls, which a
// runner of such a conductor never has).
func TestWireVersion1(t *testing.T) {
	for name, c := range wireCases(t) {
		if name == "sync calls" || name == "client CPU" || name == "idle" {
			continue
		}
		data := AppendWireVersion(nil, &c, WireV1)
		if v, err := WireVersion(data); err != nil || v != WireV1 {
			t.Fatalf("%s: version %d, %v", name, v, err)
		}
		got, err := DecodeWire(data)
		if err != nil || !reflect.DeepEqual(got, c) {
			t.Fatalf("%s: decoded %+v, %v", name, got, err)
		}
	}
}

// TestWireDecoderReusesStorage decodes results of every shape, one after
// another, with one decoder: each comes out whole, whatever came before.
func TestWireDecoderReusesStorage(t *testing.T) {
	var d WireDecoder
	cases := wireCases(t)
	for round := range 2 {
		for name, c := range cases {
			got, err := d.Decode(AppendWire(nil, &c))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*got, c) {
				t.Fatalf("round %d, %s: decoded\n%+v\nwant\n%+v", round, name, *got, c)
			}
		}
	}
	// A refused result leaves the decoder usable.
	if _, err := d.Decode([]byte("SBR\x01\x00\x05")); err == nil {
		t.Fatal("a truncated result decoded")
	}
	c := cases["real 20 s step"]
	if got, err := d.Decode(AppendWire(nil, &c)); err != nil || !reflect.DeepEqual(*got, c) {
		t.Fatalf("after a refused result: %v", err)
	}
}

// TestWireIsCompact pins the size gain on a real step: the encoding is for
// a thousand clients' results, so it must stay well below the JSON's.
func TestWireIsCompact(t *testing.T) {
	for _, timeline := range []bool{false, true} {
		c := benchBase(t, timeline)
		js, err := json.Marshal(&c)
		if err != nil {
			t.Fatal(err)
		}
		wire := AppendWire(nil, &c)
		t.Logf("timeline %v: JSON %d bytes, wire %d bytes (%.2f)", timeline, len(js), len(wire), float64(len(wire))/float64(len(js)))
		if 4*len(wire) > len(js) {
			t.Errorf("timeline %v: the wire encoding is %d bytes, more than a quarter of the JSON's %d", timeline, len(wire), len(js))
		}
	}
}

func TestDecodeWireRefusesMalformedInput(t *testing.T) {
	real20s := benchBase(t, true)
	good := AppendWire(nil, &real20s)
	// header, flags, client 0, step 0, jobs 0, no instants; then read with
	// everything zero and a histogram given by hist.
	withHist := func(hist ...byte) []byte {
		b := []byte("SBR\x01\x00\x00\x00\x00")
		b = append(b, 0, 0, 0, 0, 0)
		b = append(b, make([]byte, 32)...)
		return append(b, hist...)
	}
	// An empty histogram, then a whole zero operation (the writes).
	zeroOp := append([]byte{0}, make([]byte, 5+32+1)...)
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "not an encoded result (no SBR header)"},
		{"JSON", []byte(`{"client":1}`), "no SBR header"},
		{"version 0", []byte("SBR\x00"), "unknown result encoding version 0"},
		{"a newer version", append([]byte("SBR\x04"), good[4:]...), "unknown result encoding version 4 (this build reads [3 2 1])"},
		{"the CPU in the second encoding", []byte("SBR\x02\x20"), "unknown flags 0x20"},
		{"an idle client in the second encoding", []byte("SBR\x02\x40"), "unknown flags 0x40"},
		{"sync calls in the first encoding", []byte("SBR\x01\x10"), "unknown flags 0x10"},
		{"header alone", []byte("SBR\x01"), "truncated"},
		{"unknown flag", []byte("SBR\x01\x80"), "unknown flags 0x80"},
		{"trailing bytes", append(append([]byte{}, good...), 0), "1 bytes after the result"},
		{"varint past 64 bits", []byte("SBR\x01\x00\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"), "overflows 64 bits"},
		{"client beyond int32", binary.AppendUvarint([]byte("SBR\x01\x00"), 1<<40), "is above 2147483647"},
		{"bins not ascending", withHist(2, 5, 1, 0, 1), "histogram bin 1: indices do not ascend"},
		{"bin index past fio's", withHist(1, byte(fio.PlatNR&0x7f|0x80), byte(fio.PlatNR>>7), 1), "index is outside [0, 1856)"},
		{"bin count beyond the data", withHist(100, 1, 1), "is above"},
		{"error longer than the data", append(withHist(append(zeroOp, 0x10)...), 'x'), "an error of 16 bytes, 1 left"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeWire(c.data)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
			if strings.Contains(c.name, "version") != errors.Is(err, ErrWireVersion) {
				t.Fatalf("errors.Is(%v, ErrWireVersion) = %v", err, errors.Is(err, ErrWireVersion))
			}
		})
	}
	// Every cut of a real result is refused, never decoded as something
	// shorter.
	for n := range len(good) {
		if _, err := DecodeWire(good[:n]); err == nil {
			t.Fatalf("a real result cut to %d of %d bytes decoded", n, len(good))
		}
	}
}

func TestChooseWire(t *testing.T) {
	for _, c := range []struct {
		offered []int
		want    int
	}{
		{nil, 0},                    // a conductor from before the wire encoding: JSON
		{[]int{}, 0},                // likewise
		{[]int{7}, 0},               // only versions this runner does not know
		{[]int{1}, WireV1},          // a conductor from before sync calls
		{[]int{2, 1}, WireV2},       // a conductor from before the CPU
		{[]int{3, 2, 1}, WireV3},    // today's conductor
		{[]int{7, 1}, WireV1},       // a newer conductor that still reads version 1
		{[]int{7, 2, 1}, WireV2},    // and version 2
		{[]int{7, 3, 2, 1}, WireV3}, // and version 3
	} {
		if got := ChooseWire(c.offered); got != c.want {
			t.Errorf("ChooseWire(%v) = %d, want %d", c.offered, got, c.want)
		}
	}
}

// FuzzDecodeWire: no input panics or allocates beyond its length's worth,
// and whatever decodes encodes back to a result that decodes the same.
func FuzzDecodeWire(f *testing.F) {
	for _, c := range wireCases(f) {
		f.Add(AppendWire(nil, &c))
	}
	f.Add([]byte("SBR\x01"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := DecodeWire(data)
		if err != nil {
			return
		}
		// Compared encoded: a NaN, which Validate refuses later, is not
		// equal to itself.
		first := AppendWire(nil, &c)
		again, err := DecodeWire(first)
		if err != nil {
			t.Fatalf("re-encoding a decoded result: %v", err)
		}
		if second := AppendWire(nil, &again); !bytes.Equal(first, second) {
			t.Fatalf("re-encoded result differs:\n%+v\n%+v", again, c)
		}
	})
}

// TestOlderWiresLeaveOutCPU: a conductor that reads version 1 or 2 alone
// gets the result without the client's CPU, which it does not judge, and
// reads every flag it is sent.
func TestOlderWiresLeaveOutCPU(t *testing.T) {
	c := ClientStep{Client: 3, CPU: CPU{FioUs: 1, RunUs: 2, AvailableMilli: 1000}}
	for _, v := range []int{WireV1, WireV2} {
		got, err := DecodeWire(AppendWireVersion(nil, &c, v))
		if err != nil || got.CPU != (CPU{}) || got.Client != 3 {
			t.Fatalf("version %d: decoded %+v, %v; want client 3 without CPU", v, got, err)
		}
	}
}
