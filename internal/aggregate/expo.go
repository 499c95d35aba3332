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
)

func init() {
	for j := range subBuckets {
		edge8[j] = math.Exp2(float64(j) / subBuckets)
	}
	edge8[subBuckets] = 2
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
// false otherwise), read from the float's bits: the exponent, then the
// mantissa's top bits as the cell. It is small enough to inline into the
// per-gap loop.
func index8Common(v float64) (i int32, ok bool) {
	b := math.Float64bits(v)
	e, mant := int32(b>>52)-1023, b&(1<<52-1) // v = m·2^e, m in [1, 2)
	k := int32(cellBase[mant>>(52-cellBits)])
	if m := math.Float64frombits(mant | 1023<<52); m > edge8[k+1] {
		k++
	}
	return e*subBuckets + k, e != -1023 && mant != 0
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
// that it is the same to the bit, in one call: a span's gaps cost a loop
// over registers, not a call and a round trip through memory per gap.
func (e *Exponential) AddAll(vs []float64, weights []uint64, scale uint64) {
	if len(weights) != 0 {
		weights = weights[:len(vs)]
	}
	for next := 0; next < len(vs); {
		next = e.addRun(vs, weights, scale, next)
	}
}

// addRun adds vs[from:] with the histogram's state in locals, until a
// value falls outside the bucket range: that one goes through add (which
// may grow or downscale), and addRun returns the index after it.
func (e *Exponential) addRun(vs []float64, weights []uint64, scale uint64, from int) int {
	count, zero, sum, lo, hi := e.count, e.zero, e.sum, e.min, e.max
	// The shift is at most 19 (at scale -11 every double falls in two
	// buckets, so the scale never goes lower): masked, it compiles to a
	// plain shift, without the checks a variable shift count needs.
	counts, offset, shift := e.counts, e.offset, uint(MaxExportScale-e.scale)&31
	next := len(vs)
	for i := from; i < len(vs); i++ {
		v, n := vs[i], scale
		if len(weights) != 0 {
			n = MulSat(weights[i], scale)
		}
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
	e.AddN(vs[next], weightOf(weights, next, scale))
	return next + 1
}

// valid is v >= 0 && v <= math.MaxFloat64 (finite, not negative; -0
// counts as 0), from the bits in one integer comparison: the sign bit makes
// a negative value and the all-ones exponent an infinite or NaN one
// compare above +Inf's bits, except -0.
func valid(v float64) bool {
	b := math.Float64bits(v)
	return b < 0x7ff0_0000_0000_0000 || b == 1<<63
}

// weightOf is value i's weight: weights[i]·scale, or scale without
// weights.
func weightOf(weights []uint64, i int, scale uint64) uint64 {
	if len(weights) == 0 {
		return scale
	}
	return MulSat(weights[i], scale)
}

// add adds a valid v (finite, not negative) with weight n > 0.
func (e *Exponential) add(v float64, n uint64) {
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
		return
	}
	i8, ok := index8Common(v) // inline; index8 is a call
	if !ok {
		i8 = index8Edge(v)
	}
	i := i8 >> (uint(MaxExportScale-e.scale) & 31) // see addRun
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
