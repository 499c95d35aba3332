// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

// Package aggregate holds the connector's bounded-memory aggregation
// structures: histograms in the two OTLP shapes, a relative-error quantile
// sketch, and the sliding window built from it.
package aggregate

import (
	"math"
)

// Sketch estimates quantiles of non-negative values with a bounded relative
// error. Each power-of-two octave is cut into SubBuckets buckets of equal
// width on a log scale, [2^(e+j/n), 2^(e+(j+1)/n)), found from the float's
// exponent and a table lookup on its mantissa (no logarithm). A bucket is
// reported as the point whose relative distance to both edges is equal,
// 2·lo·hi/(lo+hi), so every value in it is within (r-1)/(r+1), r = 2^(1/n),
// of its report: 0.389% at n = 89.
//
// Memory grows with the logarithm of the value range, not with the number
// of values, and each bucket is a counter as narrow as its largest count
// needs (1, 2 or 4 bytes): a sub-window of a few hundred values over four
// decades takes about 1.2 KB.
type Sketch struct {
	counts []byte // bucket offset+i, width bytes each, little endian
	offset int32
	width  uint8 // 1, 2 or 4
	zeros  uint64
	total  uint64
	cfg    *SketchConfig
}

// Add records v; negative, NaN and infinite values are ignored (the caller
// counts them).
func (s *Sketch) Add(v float64) { s.AddN(v, 1) }

// AddN records n copies of v (a value with a weight), in one step.
func (s *Sketch) AddN(v float64, n uint64) {
	if !(v >= 0) || math.IsInf(v, 1) || n == 0 {
		return
	}
	s.total += n
	if v == 0 {
		s.zeros += n
		return
	}
	s.inc(s.cfg.index(v), n)
}

// Count is the number of values recorded.
func (s *Sketch) Count() uint64 { return s.total }

// Reset empties the sketch, keeping its memory and counter width.
func (s *Sketch) Reset() {
	clear(s.counts)
	s.counts = s.counts[:0]
	s.zeros, s.total = 0, 0
}

// Merge adds o's values to s. Both must come from the same SketchConfig.
func (s *Sketch) Merge(o *Sketch) {
	s.zeros += o.zeros
	s.total += o.total
	for j := range o.buckets() {
		if n := o.at(j); n > 0 {
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
	for j := range s.buckets() {
		seen += s.at(j)
		if k < seen {
			return s.cfg.value(s.offset + int32(j))
		}
	}
	return s.cfg.value(s.offset + int32(s.buckets()-1))
}

// Quantile estimates the q-quantile (0 ≤ q ≤ 1) the way numpy's default
// "linear" method defines it: interpolated between the order statistics at
// ranks floor((n-1)q) and the next. Each order statistic is estimated within
// the relative accuracy and the interpolation weights are non-negative, so
// the result is too. It returns NaN when empty.
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

// Bytes is the memory the sketch holds: its header and its counters.
func (s *Sketch) Bytes() int { return sketchHeaderBytes + cap(s.counts) }

const sketchHeaderBytes = 64

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
