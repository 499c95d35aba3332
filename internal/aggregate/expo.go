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
	// start of cell c; cellEdge[c] is the boundary inside cell c, or 2 when
	// there is none.
	cellBase [1 << cellBits]int32
	cellEdge [1 << cellBits]float64
)

func init() {
	j := 1
	for c := range 1 << cellBits {
		lo, hi := 1+float64(c)/(1<<cellBits), 1+float64(c+1)/(1<<cellBits)
		for j < subBuckets && math.Exp2(float64(j)/subBuckets) < lo {
			j++
		}
		cellBase[c] = int32(j - 1)
		cellEdge[c] = 2
		if j < subBuckets {
			if b := math.Exp2(float64(j) / subBuckets); b < hi {
				cellEdge[c] = b
			}
		}
	}
}

// index8 is the bucket of v > 0 at scale 8.
func index8(v float64) int32 {
	frac, exp := math.Frexp(v) // v = frac·2^exp, frac in [0.5, 1)
	m := 2 * frac              // v = m·2^(exp-1), m in [1, 2)
	e := int32(exp - 1)
	if m == 1 {
		// Bucket upper bounds are inclusive: 2^e closes bucket 256e - 1.
		return e*subBuckets - 1
	}
	c := int((m - 1) * (1 << cellBits))
	k := cellBase[c]
	if m > cellEdge[c] {
		k++
	}
	return e*subBuckets + k
}

// Add adds v once.
func (e *Exponential) Add(v float64) { e.AddN(v, 1) }

// AddN adds v with weight n: n values equal to v, in one step.
func (e *Exponential) AddN(v float64, n uint64) {
	if !(v >= 0) || math.IsInf(v, 1) || n == 0 {
		return
	}
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
	i := index8(v) >> (MaxExportScale - e.scale)
	if j := i - e.offset; j >= 0 && int(j) < len(e.counts) {
		e.counts[j] += n // the common case: a bucket in range
		return
	}
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
