// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package aggregate

import (
	"math"

	"go.opentelemetry.io/collector/pdata/pmetric"
)

// Exponential is a base-2 exponential histogram as OTLP defines it: bucket
// i at scale s holds (2^(i/2^s), 2^((i+1)/2^s)]. It starts at
// MaxExportScale and halves its resolution (merging neighbors exactly)
// whenever the values seen would need more than MaxSize buckets, so it
// always holds the best resolution its size allows, like go-expohisto, but
// maps a value to its bucket with a table lookup instead of a logarithm.
type Exponential struct {
	maxSize  int32
	scale    int32
	offset   int32    // index of counts[0] at the current scale
	counts   []uint64 // dense, len <= maxSize
	zero     uint64
	count    uint64
	sum      float64
	min, max float64
}

// NewExponential returns a histogram of at most maxSize buckets.
func NewExponential(maxSize int32) *Exponential {
	return &Exponential{maxSize: max(maxSize, 2), scale: MaxExportScale}
}

// subBuckets is 2^MaxExportScale: the buckets of one octave at the finest
// scale.
const subBuckets = 1 << MaxExportScale

// cellBits sets the lookup table's resolution: 2^cellBits cells per octave,
// finer than the finest bucket (2^(1/256) - 1 = 0.27% > 1/4096 = 0.024%),
// so a cell holds at most one bucket boundary.
const cellBits = 12

var (
	// cellBase[c] counts the boundaries 2^(j/256), 0 < j < 256, below the
	// start of cell c; edge8[j] is boundary j, with edge8[256] = 2. The
	// boundary inside cell c, if any, is edge8[cellBase[c]+1]: one byte
	// per cell and one float per bucket, 6 KB that stay in the L1 cache
	// beside the sketch's tables.
	cellBase [1 << cellBits]uint8
	edge8    [subBuckets + 1]float64
	// edgeFrac8[j] is edge8[j]'s fraction (its mantissa shifted to the
	// top of the word), or the largest uint64 for edge8[256] = 2: no
	// number in [1, 2) reaches it.
	edgeFrac8 [subBuckets + 1]uint64
)

func init() {
	for j := range subBuckets {
		edge8[j] = math.Exp2(float64(j) / subBuckets)
	}
	edge8[subBuckets] = 2
	for j, x := range edge8[:subBuckets] {
		edgeFrac8[j] = math.Float64bits(x) << 12
	}
	edgeFrac8[subBuckets] = math.MaxUint64
	j := 1
	for c := range 1 << cellBits {
		lo := 1 + float64(c)/(1<<cellBits)
		for j < subBuckets && edge8[j] < lo {
			j++
		}
		cellBase[c] = uint8(j - 1)
	}
}

// index8 is the bucket of v > 0 at scale 8.
func index8(v float64) int32 {
	if i, ok := index8Common(v); ok {
		return i
	}
	return index8Edge(v)
}

// index8Common is index8 of a normal v > 0 that is not a power of two (ok
// false otherwise). It is small enough to inline into the per-gap loop.
func index8Common(v float64) (i int32, ok bool) {
	b := math.Float64bits(v)
	return index8Bits(b), b>>52 != 0 && b&(1<<52-1) != 0
}

// index8Bits is index8 of a normal v > 0 that is not a power of two, from
// its bits b: the exponent, then the fraction's top bits as the cell. The
// fraction is compared with the boundary's as integers, which order as the
// numbers in [1, 2] do, without a move to a float register; kept at the
// top of the word, it needs no 64-bit mask constant.
func index8Bits(b uint64) int32 {
	frac := b << 12 // v = (1 + frac/2^64)·2^e
	k := uint32(cellBase[frac>>(64-cellBits)])
	if frac > edgeFrac8[k+1] {
		k++
	}
	return int32(b>>52)*subBuckets + int32(k) - 1023*subBuckets
}

// index8Edge is index8 of the rare values: powers of two and subnormals.
func index8Edge(v float64) int32 {
	b := math.Float64bits(v)
	if b>>52 == 0 {
		// Subnormal: scaling by 2^64 is exact and moves it 64 octaves up.
		return index8(v*(1<<64)) - 64*subBuckets
	}
	// Bucket upper bounds are inclusive: 2^e closes bucket 256e - 1.
	return (int32(b>>52)-1023)*subBuckets - 1
}

// Add adds v once.
func (e *Exponential) Add(v float64) { e.AddN(v, 1) }

// AddN adds v with weight n: n values equal to v, in one step.
func (e *Exponential) AddN(v float64, n uint64) {
	if !(v >= 0) || math.IsInf(v, 1) || n == 0 {
		return
	}
	e.add(v, n)
}

// AddAll adds every value of vs, vs[i] with weight weights[i]·scale
// (scale each when weights is empty; else len(weights) = len(vs)). It is
// AddN of each value in order, the float sum added in the same order so
// that it is the same to the bit. Without weights (the connector's
// default) a span's gaps cost two loops over registers, not a call per
// gap: the count, sum, min and max do not depend on the buckets, nor the
// buckets on them, so each loop keeps only its own state in registers
// (one fused loop spilled half of it to the stack at every gap).
func (e *Exponential) AddAll(vs []float64, weights []uint64, scale uint64) {
	if len(weights) != 0 {
		weights = weights[:len(vs)]
		for next := 0; next < len(vs); {
			next = e.weightedRun(vs, weights, scale, next)
		}
		return
	}
	if scale == 0 {
		return
	}
	e.addStats(vs, scale)
	e.addBuckets(vs, scale)
}

// addStats adds vs's valid values, scale > 0 each, to the count, zero
// count, sum, min and max, in runs of positive finite values. Those order
// as their bits do, so min and max are integer compare-and-moves; any
// other value (a zero, or one to skip) ends a run and goes through
// addStat.
func (e *Exponential) addStats(vs []float64, scale uint64) {
	for len(vs) > 0 {
		i := e.statsRun(vs, scale)
		if i == len(vs) {
			return
		}
		if valid(vs[i]) {
			e.addStat(vs[i], scale)
		}
		vs = vs[i+1:]
	}
}

// statsRun adds vs's leading run of positive finite values and returns
// its length.
func (e *Exponential) statsRun(vs []float64, scale uint64) int {
	// A -0 min or max is held as +0 (its bits without the sign): nothing
	// in a run is below it, so it survives unless a run value is above
	// it (max).
	const sign = 1 << 63
	lo, hi := uint64(math.MaxUint64), uint64(0)
	if e.count != 0 {
		lo, hi = math.Float64bits(e.min)&^sign, math.Float64bits(e.max)&^sign
	}
	lo0, hi0 := lo, hi
	sum, fscale := e.sum, float64(scale)
	run := len(vs)
	for i, v := range vs {
		b := math.Float64bits(v)
		if b-1 >= maxFinite { // 0 and -0 wrap round
			run = i
			break
		}
		lo, hi = min(lo, b), max(hi, b)
		sum += v * fscale
	}
	if run == 0 {
		return 0
	}
	if lo != lo0 {
		e.min = math.Float64frombits(lo)
	}
	if hi != hi0 || e.count == 0 {
		e.max = math.Float64frombits(hi)
	}
	// Counts wrap as add's do, so k additions of scale are k·scale.
	e.count += uint64(run) * scale
	e.sum = sum
	return run
}

// addBuckets adds vs's positive values, scale > 0 each, to their
// buckets, in runs that end at a value whose bucket needs more than the
// common case (a power of two, a subnormal, a bucket outside the range):
// that one goes through addBucket. With no call inside it, the run loop
// keeps its state in registers.
func (e *Exponential) addBuckets(vs []float64, scale uint64) {
	for len(vs) > 0 {
		// The shift is at most 19 (at scale -11 every double falls in two
		// buckets, so the scale never goes lower): masked, it compiles to
		// a plain shift, without the checks a variable shift count needs.
		i := e.bucketRun(scale, uint(MaxExportScale-e.scale)&31, vs)
		if i == len(vs) {
			return
		}
		e.addBucket(vs[i], scale)
		vs = vs[i+1:]
	}
}

// bucketRun adds vs's positive values to their buckets (at the scale
// shift below the finest) up to the first that bucketRun cannot place, and
// returns that one's index (len(vs) if none). The shift comes third so
// that it arrives in CX, the register a variable shift needs on amd64:
// passed after vs, the loop bound held CX and was swapped at every value.
func (e *Exponential) bucketRun(scale uint64, shift uint, vs []float64) int {
	counts, offset := e.counts, e.offset
	for i, v := range vs {
		// Two tests, with small constants, find the uncommon values: an
		// exponent field out of 1..2046 (0, subnormals, negatives,
		// infinities, NaN) or a zero fraction (a power of two).
		if b := math.Float64bits(v); uint32(b>>52)-1 < 2046 && b<<12 != 0 {
			j := uint(index8Bits(b)>>(shift&31) - offset)
			if j < uint(len(counts)) {
				counts[j] += scale
				continue
			}
		} else if !positive(v) {
			continue // 0, or a value AddAll skips
		}
		return i
	}
	return len(vs)
}

// maxFinite is the bits of the largest finite double.
const maxFinite = 0x7fef_ffff_ffff_ffff

// weightedRun adds vs[from:], vs[i] with weight weights[i]·scale, with
// the histogram's state in locals, until a value falls outside the bucket
// range: that one goes through AddN (which may grow or downscale), and
// weightedRun returns the index after it. Token weights are opt-in and
// change from gap to gap, so they keep this one fused loop.
func (e *Exponential) weightedRun(vs []float64, weights []uint64, scale uint64, from int) int {
	count, zero, sum, lo, hi := e.count, e.zero, e.sum, e.min, e.max
	// The shift is at most 19 (at scale -11 every double falls in two
	// buckets, so the scale never goes lower): masked, it compiles to a
	// plain shift, without the checks a variable shift count needs.
	counts, offset, shift := e.counts, e.offset, uint(MaxExportScale-e.scale)&31
	next := len(vs)
	for i := from; i < len(vs); i++ {
		v, n := vs[i], MulSat(weights[i], scale)
		if !valid(v) || n == 0 {
			continue
		}
		if v != 0 {
			i8, ok := index8Common(v)
			if !ok {
				i8 = index8Edge(v)
			}
			j := uint(i8>>shift - offset)
			if j >= uint(len(counts)) {
				next = i
				break
			}
			counts[j] += n
		} else {
			zero += n
		}
		if count == 0 || v < lo {
			lo = v
		}
		if count == 0 || v > hi {
			hi = v
		}
		count += n
		sum += v * float64(n)
	}
	e.count, e.zero, e.sum, e.min, e.max = count, zero, sum, lo, hi
	if next == len(vs) {
		return next
	}
	e.AddN(vs[next], MulSat(weights[next], scale))
	return next + 1
}

// positive is valid(v) && v != 0, in one comparison: subtracting one
// wraps +0 to the largest value and leaves -0 above the limit too.
func positive(v float64) bool {
	return math.Float64bits(v)-1 < 0x7ff0_0000_0000_0000-1
}

// valid is v >= 0 && v <= math.MaxFloat64 (finite, not negative; -0
// counts as 0), from the bits in one integer comparison: the sign bit makes
// a negative value and the all-ones exponent an infinite or NaN one
// compare above +Inf's bits, except -0.
func valid(v float64) bool {
	b := math.Float64bits(v)
	return b < 0x7ff0_0000_0000_0000 || b == 1<<63
}

// add adds a valid v (finite, not negative) with weight n > 0.
func (e *Exponential) add(v float64, n uint64) {
	e.addStat(v, n)
	if v != 0 {
		e.addBucket(v, n)
	}
}

// addStat adds a valid v with weight n > 0 to the count, zero count, sum,
// min and max.
func (e *Exponential) addStat(v float64, n uint64) {
	if e.count == 0 || v < e.min {
		e.min = v
	}
	if e.count == 0 || v > e.max {
		e.max = v
	}
	e.count += n
	e.sum += v * float64(n)
	if v == 0 {
		e.zero += n
	}
}

// addBucket adds weight n > 0 to the bucket of a positive finite v.
func (e *Exponential) addBucket(v float64, n uint64) {
	i8, ok := index8Common(v) // inline; index8 is a call
	if !ok {
		i8 = index8Edge(v)
	}
	i := i8 >> (uint(MaxExportScale-e.scale) & 31) // see bucketRun
	if j := uint(i - e.offset); j < uint(len(e.counts)) {
		e.counts[j] += n // the common case: a bucket in range
		return
	}
	e.insert(i, n)
}

// insert adds n to bucket i (at the current scale) outside the current
// range: it starts the range, or extends it, downscaling first when the
// range would pass maxSize buckets.
func (e *Exponential) insert(i int32, n uint64) {
	if len(e.counts) == 0 {
		e.offset = i
		e.counts = append(e.counts, n)
		return
	}
	lo, hi := min(e.offset, i), max(e.offset+int32(len(e.counts))-1, i)
	if hi-lo+1 > e.maxSize {
		shift := int32(0)
		for (hi>>shift)-(lo>>shift)+1 > e.maxSize {
			shift++
		}
		e.downscale(shift)
		i >>= shift
	}
	switch {
	case i < e.offset:
		grow := int(e.offset - i)
		e.counts = append(make([]uint64, grow, grow+len(e.counts)), e.counts...)
		e.offset = i
	case i >= e.offset+int32(len(e.counts)):
		e.counts = append(e.counts, make([]uint64, int(i-e.offset)-len(e.counts)+1)...)
	}
	e.counts[i-e.offset] += n
}

// downscale lowers the scale by shift, merging 2^shift neighbors.
func (e *Exponential) downscale(shift int32) {
	e.scale -= shift
	newOffset := e.offset >> shift
	last := (e.offset + int32(len(e.counts)) - 1) >> shift
	merged := make([]uint64, last-newOffset+1)
	for j, n := range e.counts {
		merged[((e.offset+int32(j))>>shift)-newOffset] += n
	}
	e.offset, e.counts = newOffset, merged
}

func (e *Exponential) Count() uint64 { return e.count }

// Reset empties the histogram; it keeps its scale, as the OTel SDK's does,
// so delta points of one series stay comparable.
func (e *Exponential) Reset() {
	e.counts = e.counts[:0]
	e.zero, e.count, e.sum, e.min, e.max = 0, 0, 0, 0, 0
}

// Scale is the current scale, the one the histogram is emitted at.
func (e *Exponential) Scale() int32 { return e.scale }

func (e *Exponential) AppendTo(m pmetric.Metric) Point {
	if m.Type() != pmetric.MetricTypeExponentialHistogram {
		m.SetEmptyExponentialHistogram()
	}
	dp := m.ExponentialHistogram().DataPoints().AppendEmpty()
	dp.SetCount(e.count)
	dp.SetSum(e.sum)
	if e.count > 0 {
		dp.SetMin(e.min)
		dp.SetMax(e.max)
	}
	dp.SetZeroCount(e.zero)
	dp.SetScale(e.scale)
	if len(e.counts) > 0 {
		dp.Positive().SetOffset(e.offset)
		dp.Positive().BucketCounts().FromRaw(e.counts)
	}
	return expoPoint{dp}
}

// Bytes is the memory the histogram holds.
func (e *Exponential) Bytes() int { return 96 + 8*cap(e.counts) }
