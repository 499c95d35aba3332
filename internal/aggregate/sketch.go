// Package aggregate holds the connector's bounded-memory aggregation
// structures: histograms in the two OTLP shapes, a relative-error quantile
// sketch, and the sliding window built from it.
package aggregate

import (
	"math"
)

// Sketch estimates quantiles of non-negative values with a bounded relative
// error. Each power-of-two octave [2^e, 2^(e+1)) is cut into SubBuckets
// equal-width buckets, found from the float's exponent and mantissa bits
// with no logarithm (DDSketch's linearly interpolated mapping). The widest
// bucket, relative to its lower edge, is 1/SubBuckets of an octave's start,
// so reporting a bucket's midpoint is within 1/(2·SubBuckets) of every value
// in it: 0.39% at 128. Memory grows with the logarithm of the value range,
// not with the number of values: four decades take 1,700 buckets.
type Sketch struct {
	counts []uint32 // counts[i] is bucket offset+i
	offset int32
	zeros  uint64
	total  uint64
	// geometry, shared by all sketches of one Config.
	cfg *SketchConfig
}

// SketchConfig fixes the resolution of a family of sketches; sketches merge
// only within one family.
type SketchConfig struct {
	// SubBuckets per octave; the relative error bound is 1/(2·SubBuckets).
	SubBuckets int
	// MinValue: smaller positive values count as MinValue (1 ns).
	MinValue float64
}

// NewSketchConfig returns the geometry whose relative error is at most
// alpha.
func NewSketchConfig(alpha float64) *SketchConfig {
	return &SketchConfig{SubBuckets: int(math.Ceil(1 / (2 * alpha))), MinValue: 1e-9}
}

// Alpha is the relative error bound.
func (c *SketchConfig) Alpha() float64 { return 1 / (2 * float64(c.SubBuckets)) }

// New returns an empty sketch.
func (c *SketchConfig) New() *Sketch { return &Sketch{cfg: c} }

func (c *SketchConfig) index(v float64) int32 {
	frac, exp := math.Frexp(max(v, c.MinValue)) // v = frac·2^exp, frac in [0.5, 1)
	return int32(exp)*int32(c.SubBuckets) + int32((frac-0.5)*2*float64(c.SubBuckets))
}

func (c *SketchConfig) value(i int32) float64 {
	n := int32(c.SubBuckets)
	exp, sub := i/n, i%n
	if sub < 0 {
		exp, sub = exp-1, sub+n
	}
	// The bucket covers 2^(exp-1)·[1 + sub/n, 1 + (sub+1)/n): its midpoint.
	return math.Ldexp(1+(float64(sub)+0.5)/float64(n), int(exp)-1)
}

// Add records v; negative, NaN and infinite values are ignored (the caller
// counts them).
func (s *Sketch) Add(v float64) {
	if !(v >= 0) || math.IsInf(v, 1) {
		return
	}
	s.total++
	if v == 0 {
		s.zeros++
		return
	}
	s.inc(s.cfg.index(v), 1)
}

func (s *Sketch) inc(i int32, n uint32) {
	if j := i - s.offset; j >= 0 && int(j) < len(s.counts) {
		s.counts[j] += n
		return
	}
	switch {
	case len(s.counts) == 0:
		s.counts = append(s.counts, 0)
		s.offset = i
	case i < s.offset:
		grow := int(s.offset - i)
		s.counts = append(make([]uint32, grow, grow+len(s.counts)), s.counts...)
		s.offset = i
	case int(i-s.offset) >= len(s.counts):
		s.counts = append(s.counts, make([]uint32, int(i-s.offset)-len(s.counts)+1)...)
	}
	s.counts[i-s.offset] += n
}

// Count is the number of values recorded.
func (s *Sketch) Count() uint64 { return s.total }

// Reset empties the sketch, keeping its memory.
func (s *Sketch) Reset() {
	clear(s.counts)
	s.counts = s.counts[:0]
	s.zeros, s.total = 0, 0
}

// Merge adds o's values to s. Both must come from the same SketchConfig.
func (s *Sketch) Merge(o *Sketch) {
	s.zeros += o.zeros
	s.total += o.total
	for j, n := range o.counts {
		if n > 0 {
			s.inc(o.offset+int32(j), n)
		}
	}
}

// rank returns the estimated value of the k-th smallest value (0-based).
func (s *Sketch) rank(k uint64) float64 {
	if k < s.zeros {
		return 0
	}
	seen := s.zeros
	for j, n := range s.counts {
		seen += uint64(n)
		if k < seen {
			return s.cfg.value(s.offset + int32(j))
		}
	}
	return s.cfg.value(s.offset + int32(len(s.counts)-1))
}

// Quantile estimates the q-quantile (0 ≤ q ≤ 1) the way numpy's default
// "linear" method defines it: interpolated between the order statistics at
// ranks floor((n-1)q) and the next. Each order statistic is estimated within
// the relative accuracy, so the result is too. It returns NaN when empty.
func (s *Sketch) Quantile(q float64) float64 {
	if s.total == 0 {
		return math.NaN()
	}
	v := float64(s.total-1) * q
	i := math.Floor(v)
	if i >= float64(s.total-1) {
		return s.rank(s.total - 1)
	}
	a, b := s.rank(uint64(i)), s.rank(uint64(i)+1)
	return Lerp(a, b, v-i)
}

// Lerp is numpy's two-branch linear interpolation, which is exact at both
// ends (numpy/lib/_function_base_impl.py, _lerp).
func Lerp(a, b, g float64) float64 {
	d := b - a
	if g >= 0.5 {
		return b - d*(1-g)
	}
	return a + d*g
}

// Percentile is numpy.percentile(x, p) with the default "linear" method, on
// values already sorted ascending. It is the reference the sketch is tested
// against.
func Percentile(sorted []float64, p float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	v := float64(n-1) * (p / 100)
	if v >= float64(n-1) {
		return sorted[n-1]
	}
	i := math.Floor(v)
	return Lerp(sorted[int(i)], sorted[int(i)+1], v-i)
}
