package results

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/storagebench/storagebench/internal/fio"
)

// The compact wire encoding of a ClientStep: what a runner publishes when
// its conductor reads it (see WireVersions), about a fifth of the JSON's
// size and decoded without reflection or number parsing.
//
// Version 1, in order: the 4-byte header "SBR\x01"; a flags byte
// (wireInterrupted, and one bit per start/end instant present); client,
// step and jobs as uvarints; the instants present as zigzag varints of Unix
// nanoseconds; read, then write (uvarint IOs, bytes, count, min and max ns;
// float64 IOPS, bytes/s, mean and stddev ns, little-endian; the histogram);
// the error (uvarint length, UTF-8 bytes); the timeline (uvarint window
// seconds and window count; per window uvarint start ms, I/Os, bytes,
// float64 IOPS and bytes/s, the histogram; uvarint idle span count, each
// span's start and end ms). A histogram is its uvarint bin count, then per
// bin the uvarint gap from the previous bin's index (the first: its index)
// and its uvarint count. Nothing may follow.
//
// Version 2 is version 1 with one more flag, wireSync: when set, the sync
// calls' operation follows the write's, encoded as they are.
//
// Version 3 is version 2 with two more flags: wireCPU, when set, the
// client's CPU follows (after the sync calls' when both are): uvarint fio
// µs, run µs, available thousandths of a CPU, CFS periods, throttled
// periods and throttled µs; wireIdle marks a client that idled through the
// step.
//
// A later version gets a new header byte; a conductor lists the versions it
// reads in the plan, and a runner writes the highest it knows among them
// (or JSON when none is listed, as a conductor older than version 1 does).
const (
	// WireV1 is version 1 of the encoding.
	WireV1 = 1
	// WireV2 adds the sync calls.
	WireV2 = 2
	// WireV3 adds the client's CPU and idle clients.
	WireV3 = 3
	// wireMagic starts every encoded result; its fourth byte is the version.
	wireMagic = "SBR"
)

// WireVersions are the versions of the wire encoding this build reads and
// writes, newest first.
var WireVersions = []int{WireV3, WireV2, WireV1}

// ChooseWire returns the newest version of WireVersions that offered (a
// conductor's list) also holds, or 0 when there is none: JSON, then.
func ChooseWire(offered []int) int {
	for _, v := range WireVersions {
		if slices.Contains(offered, v) {
			return v
		}
	}
	return 0
}

// Flags of the wire encoding's flags byte.
const (
	wireInterrupted = 1 << iota
	wirePlannedStart
	wireActualStart
	wireEnd
	wireSync
	wireCPU
	wireIdle
	wireFlagsV1 = wireInterrupted | wirePlannedStart | wireActualStart | wireEnd
	wireFlagsV2 = wireFlagsV1 | wireSync
	wireFlagsV3 = wireFlagsV2 | wireCPU | wireIdle
)

// AppendWire appends c's wire encoding in the newest version to buf.
func AppendWire(buf []byte, c *ClientStep) []byte {
	return AppendWireVersion(buf, c, WireVersions[0])
}

// AppendWireVersion appends c's wire encoding in version v (one of
// WireVersions) to buf. Version 1 has no sync calls: a writer that has
// them needs version 2 (or JSON). Versions 1 and 2 have no CPU, which is
// left out (a conductor that reads neither does not judge it), and no idle
// clients, which such a conductor never orders.
func AppendWireVersion(buf []byte, c *ClientStep, v int) []byte {
	buf = append(buf, wireMagic...)
	buf = append(buf, byte(v))
	var flags byte
	if c.Interrupted {
		flags |= wireInterrupted
	}
	if v >= WireV2 && !c.Sync.isZero() {
		flags |= wireSync
	}
	if v >= WireV3 && c.CPU != (CPU{}) {
		flags |= wireCPU
	}
	if v >= WireV3 && c.Idle {
		flags |= wireIdle
	}
	times := [...]struct {
		flag byte
		t    time.Time
	}{{wirePlannedStart, c.PlannedStart}, {wireActualStart, c.ActualStart}, {wireEnd, c.End}}
	for _, t := range times {
		if !t.t.IsZero() {
			flags |= t.flag
		}
	}
	buf = append(buf, flags)
	buf = binary.AppendUvarint(buf, uint64(c.Client))
	buf = binary.AppendUvarint(buf, uint64(c.Step))
	buf = binary.AppendUvarint(buf, uint64(c.Jobs))
	for _, t := range times {
		if !t.t.IsZero() {
			buf = binary.AppendVarint(buf, t.t.UnixNano())
		}
	}
	buf = appendOperation(buf, &c.Read)
	buf = appendOperation(buf, &c.Write)
	if flags&wireSync != 0 {
		buf = appendOperation(buf, &c.Sync)
	}
	if flags&wireCPU != 0 {
		u := &c.CPU
		for _, v := range [...]uint64{u.FioUs, u.RunUs, u.AvailableMilli, u.Periods, u.ThrottledPeriods, u.ThrottledUs} {
			buf = binary.AppendUvarint(buf, v)
		}
	}
	buf = binary.AppendUvarint(buf, uint64(len(c.Error)))
	buf = append(buf, c.Error...)
	t := &c.Timeline
	buf = binary.AppendUvarint(buf, uint64(t.WindowSeconds))
	buf = binary.AppendUvarint(buf, uint64(len(t.Windows)))
	for i := range t.Windows {
		w := &t.Windows[i]
		buf = binary.AppendUvarint(buf, w.StartMs)
		buf = binary.AppendUvarint(buf, w.IOs)
		buf = binary.AppendUvarint(buf, w.Bytes)
		buf = appendFloat(buf, w.IOPS)
		buf = appendFloat(buf, w.BytesPerSec)
		buf = appendHist(buf, w.Hist)
	}
	buf = binary.AppendUvarint(buf, uint64(len(t.Idle)))
	for _, s := range t.Idle {
		buf = binary.AppendUvarint(buf, s.StartMs)
		buf = binary.AppendUvarint(buf, s.EndMs)
	}
	return buf
}

func appendOperation(buf []byte, d *Operation) []byte {
	l := &d.Latency
	for _, v := range [...]uint64{d.IOs, d.Bytes, l.Count, l.MinNs, l.MaxNs} {
		buf = binary.AppendUvarint(buf, v)
	}
	for _, f := range [...]float64{d.IOPS, d.BytesPerSec, l.MeanNs, l.StdNs} {
		buf = appendFloat(buf, f)
	}
	return appendHist(buf, l.Hist)
}

func appendFloat(buf []byte, f float64) []byte {
	return binary.LittleEndian.AppendUint64(buf, math.Float64bits(f))
}

func appendHist(buf []byte, h fio.Histogram) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(h.Bins)))
	prev := 0
	for i, b := range h.Bins {
		gap := b.Index
		if i > 0 {
			gap = b.Index - prev
		}
		prev = b.Index
		buf = binary.AppendUvarint(buf, uint64(gap))
		buf = binary.AppendUvarint(buf, b.Count)
	}
	return buf
}

// ErrWireVersion marks an encoded result of a version this build does not
// read.
var ErrWireVersion = errors.New("unknown result encoding version")

// WireVersion returns the version in an encoded result's header, or an
// error when data does not start with one.
func WireVersion(data []byte) (int, error) {
	if len(data) < len(wireMagic)+1 || string(data[:len(wireMagic)]) != wireMagic {
		return 0, errors.New("not an encoded result (no SBR header)")
	}
	return int(data[len(wireMagic)]), nil
}

// DecodeWire decodes an encoded result. It checks the encoding only
// (lengths, bin order, index range, nothing left over): the figures are for
// ClientStep.Validate.
func DecodeWire(data []byte) (ClientStep, error) {
	// Every bin takes at least two bytes: one allocation holds them all.
	d := WireDecoder{bins: make([]fio.Bin, 0, len(data)/2)}
	c, err := d.Decode(data)
	if err != nil {
		return ClientStep{}, err
	}
	return *c, nil
}

// A WireDecoder decodes results one after another into the same storage,
// so that decoding a thousand clients' results, each validated, merged and
// dropped in turn, allocates next to nothing. The result Decode returns,
// and every slice in it, is valid until the next Decode.
type WireDecoder struct {
	c       ClientStep
	bins    []fio.Bin
	windows []Window
	idle    []Span
}

// Decode is DecodeWire into the decoder's storage.
func (w *WireDecoder) Decode(data []byte) (*ClientStep, error) {
	v, err := WireVersion(data)
	if err != nil {
		return nil, err
	}
	mask := byte(wireFlagsV3)
	switch v {
	case WireV1:
		mask = wireFlagsV1
	case WireV2:
		mask = wireFlagsV2
	case WireV3:
	default:
		return nil, fmt.Errorf("%w %d (this build reads %v)", ErrWireVersion, v, WireVersions)
	}
	w.c = ClientStep{Timeline: Timeline{Windows: w.windows[:0], Idle: w.idle[:0]}}
	d := wireDecoder{data: data, pos: len(wireMagic) + 1, bins: w.bins[:0], flags: mask}
	err = d.client(&w.c)
	// Keep the largest storage for the next decode.
	w.bins = d.bins[:0]
	if t := &w.c.Timeline; cap(t.Windows) > cap(w.windows) {
		w.windows = t.Windows[:0]
	}
	if t := &w.c.Timeline; cap(t.Idle) > cap(w.idle) {
		w.idle = t.Idle[:0]
	}
	if err != nil {
		return nil, fmt.Errorf("encoded result, byte %d: %w", d.pos, err)
	}
	return &w.c, nil
}

type wireDecoder struct {
	data []byte
	pos  int
	err  error
	// bins holds every histogram's bins, one after another.
	bins []fio.Bin
	// flags are the flags the version has.
	flags byte
}

var (
	errWireShort = errors.New("truncated")
	errWireLarge = errors.New("value out of range")
)

func (d *wireDecoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	// The common case, one byte, inline.
	if d.pos < len(d.data) && d.data[d.pos] < 0x80 {
		d.pos++
		return uint64(d.data[d.pos-1])
	}
	v, n := binary.Uvarint(d.data[d.pos:])
	switch {
	case n == 0:
		d.err = errWireShort
	case n < 0:
		d.err = fmt.Errorf("%w: a varint overflows 64 bits", errWireLarge)
	}
	d.pos += max(n, 0)
	return v
}

// small reads a uvarint that must be at most limit.
func (d *wireDecoder) small(limit int) int {
	v := d.uvarint()
	if v > uint64(limit) {
		d.err = fmt.Errorf("%w: %d is above %d", errWireLarge, v, limit)
		return 0
	}
	return int(v)
}

// varint reads a zigzag varint (binary.AppendVarint's).
func (d *wireDecoder) varint() int64 {
	u := d.uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

func (d *wireDecoder) float() float64 {
	if d.err != nil {
		return 0
	}
	if len(d.data)-d.pos < 8 {
		d.err = errWireShort
		return 0
	}
	d.pos += 8
	return math.Float64frombits(binary.LittleEndian.Uint64(d.data[d.pos-8:]))
}

func (d *wireDecoder) client(c *ClientStep) error {
	if d.pos >= len(d.data) {
		return errWireShort
	}
	flags := d.data[d.pos]
	d.pos++
	if flags&^d.flags != 0 {
		return fmt.Errorf("unknown flags %#x", flags&^d.flags)
	}
	c.Interrupted = flags&wireInterrupted != 0
	c.Idle = flags&wireIdle != 0
	c.Client, c.Step, c.Jobs = d.small(math.MaxInt32), d.small(math.MaxInt32), d.small(math.MaxInt32)
	for _, t := range [...]struct {
		flag byte
		t    *time.Time
	}{{wirePlannedStart, &c.PlannedStart}, {wireActualStart, &c.ActualStart}, {wireEnd, &c.End}} {
		if flags&t.flag != 0 {
			*t.t = time.Unix(0, d.varint()).UTC()
		}
	}
	d.operation(&c.Read)
	d.operation(&c.Write)
	if flags&wireSync != 0 {
		d.operation(&c.Sync)
	}
	if flags&wireCPU != 0 {
		u := &c.CPU
		for _, v := range [...]*uint64{&u.FioUs, &u.RunUs, &u.AvailableMilli, &u.Periods, &u.ThrottledPeriods, &u.ThrottledUs} {
			*v = d.uvarint()
		}
	}
	n := d.uvarint()
	if d.err == nil && n > uint64(len(d.data)-d.pos) {
		d.err = fmt.Errorf("%w: an error of %d bytes, %d left", errWireLarge, n, len(d.data)-d.pos)
	}
	if d.err != nil {
		return d.err
	}
	// JSON would have replaced invalid UTF-8 as well.
	c.Error = strings.ToValidUTF8(string(d.data[d.pos:d.pos+int(n)]), "\uFFFD")
	d.pos += int(n)
	d.timeline(&c.Timeline)
	if d.err == nil && d.pos != len(d.data) {
		d.err = fmt.Errorf("%d bytes after the result", len(d.data)-d.pos)
	}
	return d.err
}

func (d *wireDecoder) operation(o *Operation) {
	l := &o.Latency
	o.IOs, o.Bytes, l.Count, l.MinNs, l.MaxNs = d.uvarint(), d.uvarint(), d.uvarint(), d.uvarint(), d.uvarint()
	o.IOPS, o.BytesPerSec, l.MeanNs, l.StdNs = d.float(), d.float(), d.float(), d.float()
	l.Hist = d.hist()
}

// hist decodes a histogram. Bin indices must ascend and stay below
// fio.PlatNR.
func (d *wireDecoder) hist() fio.Histogram {
	// Each bin takes at least two bytes.
	n := d.small(min(fio.PlatNR, (len(d.data)-d.pos)/2))
	if d.err != nil || n == 0 {
		return fio.Histogram{}
	}
	start := len(d.bins)
	idx := 0
	for i := range n {
		var gap, count uint64
		if p := d.pos; p+1 < len(d.data) && d.data[p]|d.data[p+1] < 0x80 {
			// Most bins are a one-byte gap and a one-byte count: read
			// them here, without a call.
			gap, count = uint64(d.data[p]), uint64(d.data[p+1])
			d.pos += 2
		} else if gap, count = d.uvarint(), d.uvarint(); d.err != nil {
			return fio.Histogram{}
		}
		// The first bin's gap is its index.
		switch {
		case i > 0 && gap == 0:
			d.err = fmt.Errorf("histogram bin %d: indices do not ascend", i)
		case gap >= fio.PlatNR || idx+int(gap) >= fio.PlatNR:
			d.err = fmt.Errorf("histogram bin %d: index is outside [0, %d)", i, fio.PlatNR)
		}
		if d.err != nil {
			return fio.Histogram{}
		}
		idx += int(gap)
		d.bins = append(d.bins, fio.Bin{Index: idx, Count: count})
	}
	// Capacity cut, so that nothing appended to one histogram reaches the
	// next.
	return fio.Histogram{Bins: d.bins[start:len(d.bins):len(d.bins)]}
}

func (d *wireDecoder) timeline(t *Timeline) {
	t.WindowSeconds = d.small(math.MaxInt32)
	// A window takes at least 20 bytes: three uvarints, two floats, a bin
	// count.
	n := d.small(min(MaxWindows, (len(d.data)-d.pos)/20))
	if d.err != nil {
		return
	}
	// t's slices are empty, with a previous decode's storage (WireDecoder).
	t.Windows = slices.Grow(t.Windows, n)[:n]
	if n == 0 {
		t.Windows = nil
	}
	for i := range t.Windows {
		w := &t.Windows[i]
		w.StartMs, w.IOs, w.Bytes = d.uvarint(), d.uvarint(), d.uvarint()
		w.IOPS, w.BytesPerSec = d.float(), d.float()
		w.Hist = d.hist()
		if d.err != nil {
			return
		}
	}
	m := d.small(min(MaxWindows, (len(d.data)-d.pos)/2))
	if d.err != nil || m == 0 {
		t.Idle = nil
		return
	}
	t.Idle = slices.Grow(t.Idle, m)
	for range m {
		t.Idle = append(t.Idle, Span{StartMs: d.uvarint(), EndMs: d.uvarint()})
	}
}
