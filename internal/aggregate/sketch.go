// Package aggregate holds the connector's bounded-memory aggregation
// structures: histograms in the two OTLP shapes, a relative-error quantile
// sketch, and the sliding window built from it.
package aggregate

import (
	"math"
)

// Sketch estimates quantiles of non-negative values with a bounded relative
// error. Values fall into logarithmic buckets: bucket i holds
// (γ^(i-1), γ^i] with γ = (1+α)/(1-α), and reports the value
// 2γ^i/(γ+1), which is within α of every value in the bucket (the DDSketch
// mapping). Memory grows with the logarithm of the value range, not with the
// number of values: four decades take 460 buckets at α = 0.5%.
type Sketch struct {
	counts []uint32 // counts[i] is bucket offset+i
	offset int32
	zeros  uint64
	total  uint64
	// geometry, shared by all sketches of one Config.
	cfg *SketchConfig
}

// SketchConfig fixes the relative accuracy of a family of sketches; sketches
// merge only within one family.
type SketchConfig struct {
	Alpha    float64
	gamma    float64
	logGamma float64
	// MinValue: smaller positive values count as MinValue (1 ns).
	MinValue float64
}

// NewSketchConfig returns the geometry for relative accuracy alpha.
func NewSketchConfig(alpha float64) *SketchConfig {
	g := (1 + alpha) / (1 - alpha)
	return &SketchConfig{Alpha: alpha, gamma: g, logGamma: math.Log(g), MinValue: 1e-9}
}

// New returns an empty sketch.
func (c *SketchConfig) New() *Sketch { return &Sketch{cfg: c} }

func (c *SketchConfig) index(v float64) int32 {
	return int32(math.Ceil(math.Log(max(v, c.MinValue)) / c.logGamma))
}

func (c *SketchConfig) value(i int32) float64 {
	return 2 * math.Exp(float64(i)*c.logGamma) / (c.gamma + 1)
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
