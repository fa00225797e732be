package fio

import (
	"bytes"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"sort"
)

// fio keeps completion latencies in a log-linear histogram (stat.h): values
// below 2*PlatVal nanoseconds get one bin each; above that, every power-of-two
// "group" is split into PlatVal equal bins. fio 3.x uses 6 bits per group and
// 29 groups, which covers latencies up to ~17 s in nanoseconds.
const (
	platBits    = 6
	platVal     = 1 << platBits
	platGroupNR = 29
	// PlatNR is the number of bins in fio's latency histogram.
	PlatNR = platGroupNR * platVal
)

// binValues[i] is the latency fio prints for bin i in json+ output
// (plat_idx_to_val: the middle of the bin's range).
var binValues = func() [PlatNR]uint64 {
	var v [PlatNR]uint64
	for i := range v {
		v[i] = indexToValue(i)
	}
	return v
}()

func indexToValue(idx int) uint64 {
	if idx < 2*platVal {
		return uint64(idx)
	}
	// The middle of the bin: its lower edge plus half its width
	// (2^errorBits, exact because errorBits >= 1).
	errorBits := uint(idx>>platBits) - 1
	return binLowerEdge(idx) + 1<<(errorBits-1)
}

// valueToIndex maps a latency in nanoseconds to fio's bin index
// (plat_val_to_idx).
func valueToIndex(v uint64) int {
	if v < 2*platVal {
		return int(v)
	}
	msb := bits.Len64(v) - 1
	errorBits := msb - platBits
	base := (errorBits + 1) << platBits
	offset := int((v >> uint(errorBits)) & (platVal - 1))
	idx := base + offset
	if idx > PlatNR-1 {
		idx = PlatNR - 1
	}
	return idx
}

// IndexOf returns the index of the bin whose range holds a latency of ns,
// as fio does when it records a completion.
func IndexOf(ns uint64) int { return valueToIndex(ns) }

// BinValue returns the latency in nanoseconds that fio reports for bin index
// idx.
func BinValue(idx int) uint64 { return binValues[idx] }

// BinIndex returns the bin index of a latency value that fio printed as a
// json+ bin key. It fails for values that are not a bin's reported value, which
// means the output came from a fio with a different histogram layout.
func BinIndex(ns uint64) (int, error) {
	idx := valueToIndex(ns)
	if binValues[idx] != ns {
		return 0, fmt.Errorf("latency bin %d ns is not a fio 3.x histogram bin value (nearest bin reports %d ns)", ns, binValues[idx])
	}
	return idx, nil
}

// Bin is one non-empty bin of a latency histogram.
type Bin struct {
	Index int
	Count uint64
}

// Histogram is a sparse fio completion-latency histogram: non-empty bins in
// ascending latency order. Its JSON form is a list of [latencyNs, count]
// pairs, the same numbers fio prints in json+ "bins", so a stored histogram
// stays readable and can be checked against fio's own output.
type Histogram struct {
	Bins []Bin
}

// Total returns the number of samples in the histogram.
func (h Histogram) Total() uint64 {
	var n uint64
	for _, b := range h.Bins {
		n += b.Count
	}
	return n
}

// MarshalJSON encodes the histogram as [[latencyNs, count], ...].
func (h Histogram) MarshalJSON() ([]byte, error) {
	buf := make([]byte, 0, 2+len(h.Bins)*16)
	buf = append(buf, '[')
	for i, b := range h.Bins {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = fmt.Appendf(buf, "[%d,%d]", binValues[b.Index], b.Count)
	}
	return append(buf, ']'), nil
}

// UnmarshalJSON decodes [[latencyNs, count], ...], validating every bin.
// It is hand-written because the operator decodes one histogram per client,
// direction and step: reflection-based decoding was the dominant cost.
func (h *Histogram) UnmarshalJSON(data []byte) error {
	p := histParser{data: data}
	if p.literal("null") {
		h.Bins = nil
		return nil
	}
	if !p.expect('[') {
		return p.fail("expected '['")
	}
	bins := make([]Bin, 0, bytes.Count(data, []byte{'['})-1)
	sorted := true
	for first := true; ; first = false {
		if p.expect(']') {
			break
		}
		if !first && !p.expect(',') {
			return p.fail("expected ',' or ']'")
		}
		if !p.expect('[') {
			return p.fail("expected '[' opening a [latencyNs, count] pair")
		}
		ns, ok := p.uint()
		if !ok || !p.expect(',') {
			return p.fail("expected a latency and ','")
		}
		count, ok := p.uint()
		if !ok || !p.expect(']') {
			return p.fail("expected a count and ']'")
		}
		idx, err := BinIndex(ns)
		if err != nil {
			return fmt.Errorf("histogram: %w", err)
		}
		if count == 0 {
			continue
		}
		if n := len(bins); n > 0 && bins[n-1].Index >= idx {
			sorted = false
		}
		bins = append(bins, Bin{Index: idx, Count: count})
	}
	p.space()
	if p.pos != len(p.data) {
		return p.fail("trailing data")
	}
	if !sorted {
		bins = normalize(bins)
	}
	h.Bins = bins
	return nil
}

type histParser struct {
	data []byte
	pos  int
}

func (p *histParser) space() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *histParser) expect(c byte) bool {
	p.space()
	if p.pos < len(p.data) && p.data[p.pos] == c {
		p.pos++
		return true
	}
	return false
}

func (p *histParser) literal(s string) bool {
	p.space()
	if bytes.HasPrefix(p.data[p.pos:], []byte(s)) {
		p.pos += len(s)
		return true
	}
	return false
}

func (p *histParser) uint() (uint64, bool) {
	p.space()
	start := p.pos
	var v uint64
	for p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '9' {
		d := uint64(p.data[p.pos] - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, false
		}
		v = v*10 + d
		p.pos++
	}
	return v, p.pos > start
}

func (p *histParser) fail(msg string) error {
	return fmt.Errorf("histogram: %s at offset %d", msg, p.pos)
}

// HistogramFromFio builds a histogram from fio's json+ "bins" object
// (latency in ns as a decimal string → count).
func HistogramFromFio(bins map[string]uint64) (Histogram, error) {
	out := make([]Bin, 0, len(bins))
	for k, c := range bins {
		var ns uint64
		if _, err := fmt.Sscan(k, &ns); err != nil {
			return Histogram{}, fmt.Errorf("latency bin key %q is not an integer", k)
		}
		idx, err := BinIndex(ns)
		if err != nil {
			return Histogram{}, err
		}
		if c > 0 {
			out = append(out, Bin{Index: idx, Count: c})
		}
	}
	return Histogram{Bins: normalize(out)}, nil
}

// normalize sorts bins and folds duplicates.
func normalize(bins []Bin) []Bin {
	sort.Slice(bins, func(i, j int) bool { return bins[i].Index < bins[j].Index })
	out := bins[:0]
	for _, b := range bins {
		if n := len(out); n > 0 && out[n-1].Index == b.Index {
			out[n-1].Count += b.Count
			continue
		}
		out = append(out, b)
	}
	return out
}

// Merge returns the bin-by-bin sum of two histograms whose bins are in
// ascending order, as sparse as its inputs: where an Accumulator holds
// every one of fio's bins, Merge costs memory only for the bins in use.
func Merge(a, b Histogram) Histogram {
	return MergeInto(make([]Bin, 0, max(len(a.Bins), len(b.Bins))), a, b)
}

// MergeInto is Merge writing into dst's storage (from its start), which
// must not be a's or b's: a caller adding many histograms into one keeps
// two buffers and swaps them, rather than allocating a histogram per add.
func MergeInto(dst []Bin, a, b Histogram) Histogram {
	out := dst[:0]
	i, j := 0, 0
	for i < len(a.Bins) || j < len(b.Bins) {
		switch {
		case j == len(b.Bins) || (i < len(a.Bins) && a.Bins[i].Index < b.Bins[j].Index):
			out = append(out, a.Bins[i])
			i++
		case i == len(a.Bins) || b.Bins[j].Index < a.Bins[i].Index:
			out = append(out, b.Bins[j])
			j++
		default:
			out = append(out, Bin{Index: a.Bins[i].Index, Count: a.Bins[i].Count + b.Bins[j].Count})
			i, j = i+1, j+1
		}
	}
	return Histogram{Bins: out}
}

// Accumulator sums histograms bin by bin. Summing counts is the only exact
// way to combine latency distributions from several fio jobs or clients; see
// the package documentation.
type Accumulator struct {
	counts [PlatNR]uint64
	total  uint64
}

// Add adds every bin of h.
func (a *Accumulator) Add(h Histogram) { a.AddCountingNew(h) }

// AddCountingNew is Add, returning how many of h's bins were empty before.
func (a *Accumulator) AddCountingNew(h Histogram) (newBins int) {
	for _, b := range h.Bins {
		if a.counts[b.Index] == 0 {
			newBins++
		}
		a.counts[b.Index] += b.Count
		a.total += b.Count
	}
	return newBins
}

// Total returns the number of samples added.
func (a *Accumulator) Total() uint64 { return a.total }

// Histogram returns the accumulated counts as a sparse histogram.
func (a *Accumulator) Histogram() Histogram {
	n := 0
	for _, c := range a.counts {
		if c > 0 {
			n++
		}
	}
	bins := make([]Bin, 0, n)
	for i, c := range a.counts {
		if c > 0 {
			bins = append(bins, Bin{Index: i, Count: c})
		}
	}
	return Histogram{Bins: bins}
}

// Percentiles returns, for each percentile p in ps (0 < p <= 100), the value
// fio would report for these bins: the reported value of the first bin, in
// ascending latency order, whose cumulative count reaches p/100 × total. It
// returns zeros for an empty accumulator.
func (a *Accumulator) Percentiles(ps []float64) []uint64 {
	out := make([]uint64, len(ps))
	if a.total == 0 || len(ps) == 0 {
		return out
	}
	thresholds := make([]*big.Float, len(ps))
	for i, p := range ps {
		thresholds[i] = Threshold(p, a.total)
	}
	var cum uint64
	cumF := new(big.Float).SetPrec(thresholdPrec)
	j := 0
	// fio walks the bins once and requires the percentile list to be
	// ascending; we allow any order by answering each p independently.
	order := make([]int, len(ps))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(x, y int) bool { return ps[order[x]] < ps[order[y]] })
	for idx, c := range a.counts {
		if c == 0 {
			continue
		}
		cum += c
		cumF.SetUint64(cum)
		for j < len(order) && cumF.Cmp(thresholds[order[j]]) >= 0 {
			out[order[j]] = binValues[idx]
			j++
		}
		if j == len(order) {
			break
		}
	}
	// Percentiles above 100 or rounding past the end: the last bin, as fio.
	for ; j < len(order); j++ {
		out[order[j]] = binValues[a.lastIndex()]
	}
	return out
}

// OverflowFloorNs is the lower edge of fio's last histogram bin (about
// 17.05 s): fio counts every completion at or above it in that bin, so
// their latencies are lost except the exact maximum.
var OverflowFloorNs = binLowerEdge(PlatNR - 1)

// binLowerEdge is the smallest latency fio files in bin idx.
func binLowerEdge(idx int) uint64 {
	if idx < 2*platVal {
		return uint64(idx)
	}
	errorBits := uint(idx>>platBits) - 1
	return uint64(1)<<(errorBits+platBits) + uint64(idx%platVal)<<errorBits
}

// Overflow is the number of samples in fio's last bin, at or above
// OverflowFloorNs.
func (a *Accumulator) Overflow() uint64 { return a.counts[PlatNR-1] }

func (a *Accumulator) lastIndex() int {
	for i := PlatNR - 1; i >= 0; i-- {
		if a.counts[i] > 0 {
			return i
		}
	}
	return 0
}

// thresholdPrec is the mantissa width of x87 extended precision, the
// long double in which fio computes percentile thresholds on x86-64 Linux.
const thresholdPrec = 64

// hundredth is 0.01 rounded to long double, the constant fio's build uses.
var hundredth = new(big.Float).SetPrec(thresholdPrec).Quo(
	new(big.Float).SetPrec(thresholdPrec).SetInt64(1),
	new(big.Float).SetPrec(thresholdPrec).SetInt64(100))

// Threshold returns fio's cumulative-count threshold for percentile p over n
// samples, computed as the fio binary computes it. fio's source says
// "(long double) p / 100.0 * nr", but fio builds with -O3 -ffast-math, and
// the compiled code (checked by disassembling the fio the runner image ships)
// multiplies n by 0.01 in long double once, then p by that product: each step
// rounded to a 64-bit mantissa. The order matters: evaluating the source's
// order instead gives a threshold a hair above 840 for p60 of 1,400 samples,
// where fio's is exactly 840, and picks a different bin whenever the
// cumulative count lands on that integer.
func Threshold(p float64, n uint64) *big.Float {
	scaled := new(big.Float).SetPrec(thresholdPrec).SetUint64(n)
	scaled.Mul(scaled, hundredth)
	return scaled.Mul(scaled, new(big.Float).SetPrec(thresholdPrec).SetFloat64(p))
}

// Percentiles is a convenience wrapper over an Accumulator for one histogram.
func (h Histogram) Percentiles(ps []float64) []uint64 {
	var a Accumulator
	a.Add(h)
	return a.Percentiles(ps)
}
