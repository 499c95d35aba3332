// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package aggregate

import (
	"sort"

	"go.opentelemetry.io/collector/pdata/pmetric"
)

// MaxExportScale is the largest exponential-histogram scale emitted:
// Prometheus native histograms stop at schema 8, and a finer scale would be
// thrown away on the way in.
const MaxExportScale = 8

// Histogram is one distribution in either OTLP shape.
type Histogram interface {
	Add(v float64)
	// AddN adds v with weight n (n values equal to v) in one step: a
	// token-aware ITL gap stands for the n tokens of its chunk.
	AddN(v float64, n uint64)
	// AddAll adds vs[i] with weight weights[i]·scale (scale each when
	// weights is empty), as AddN of each in order: a span's gaps in one
	// call.
	AddAll(vs []float64, weights []uint64, scale uint64)
	Count() uint64
	// Reset empties it (delta temporality).
	Reset()
	// AppendTo writes one data point to the metric (whose type it sets on
	// first use) and returns it, for the caller to add attributes and times.
	AppendTo(m pmetric.Metric) Point
	// Bytes is the memory it holds.
	Bytes() int
}

// Explicit is a histogram with fixed bucket bounds, for classic
// histogram_quantile and for SLO thresholds placed on a bound.
type Explicit struct {
	bounds []float64 // shared, read-only
	counts []uint64
	sum    float64
	count  uint64
	min    float64
	max    float64
}

// NewExplicit returns a histogram over bounds (ascending, shared).
func NewExplicit(bounds []float64) *Explicit {
	return &Explicit{bounds: bounds, counts: make([]uint64, len(bounds)+1)}
}

// Add adds v once.
func (x *Explicit) Add(v float64) { x.AddN(v, 1) }

// AddN adds v with weight n.
func (x *Explicit) AddN(v float64, n uint64) {
	if n == 0 {
		return
	}
	// A value equal to a bound belongs to the bucket it closes (le).
	x.counts[sort.SearchFloat64s(x.bounds, v)] += n
	if x.count == 0 || v < x.min {
		x.min = v
	}
	if x.count == 0 || v > x.max {
		x.max = v
	}
	x.sum += v * float64(n)
	x.count += n
}

// AddAll adds vs[i] with weight weights[i]·scale (scale each when weights
// is empty).
func (x *Explicit) AddAll(vs []float64, weights []uint64, scale uint64) {
	for i, v := range vs {
		n := scale
		if len(weights) != 0 {
			n = MulSat(weights[i], scale)
		}
		x.AddN(v, n)
	}
}

func (x *Explicit) Count() uint64 { return x.count }

func (x *Explicit) Reset() {
	clear(x.counts)
	x.sum, x.count, x.min, x.max = 0, 0, 0, 0
}

func (x *Explicit) AppendTo(m pmetric.Metric) Point {
	if m.Type() != pmetric.MetricTypeHistogram {
		m.SetEmptyHistogram()
	}
	dp := m.Histogram().DataPoints().AppendEmpty()
	dp.SetCount(x.count)
	dp.SetSum(x.sum)
	if x.count > 0 {
		dp.SetMin(x.min)
		dp.SetMax(x.max)
	}
	dp.ExplicitBounds().FromRaw(x.bounds)
	dp.BucketCounts().FromRaw(x.counts)
	return explicitPoint{dp}
}

// Bytes is the memory the histogram holds.
func (x *Explicit) Bytes() int { return 80 + 8*cap(x.counts) }
