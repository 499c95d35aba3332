// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package aggregate

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// TestPercentileMatchesNumpy: Percentile is bit for bit numpy.percentile
// with the default "linear" method (values from numpy 1.24.2).
func TestPercentileMatchesNumpy(t *testing.T) {
	x := []float64{0.1, 0.2, 0.30000000000000004, 7, 1e-3, 3.3, 2.2, 0.7, 11.5, 0.05, 0.123456789}
	slices.Sort(x)
	for _, c := range []struct{ p, want float64 }{
		{0, 0.001},
		{1, 0.005900000000000001},
		{10, 0.05},
		{25, 0.1117283945},
		{33.3, 0.14871604863},
		{50, 0.30000000000000004},
		{66.7, 1.705},
		{90, 7.0},
		{95, 9.25},
		{99, 11.05},
		{99.9, 11.455000000000009},
		{100, 11.5},
	} {
		assert.Equal(t, c.want, Percentile(x, c.p), "p%v", c.p)
	}
	assert.True(t, math.IsNaN(Percentile(nil, 50)))
	assert.Equal(t, 3.0, Percentile([]float64{3}, 99))
}

func newPoint(scale int32, zero uint64, offset int32, counts ...uint64) pmetric.ExponentialHistogramDataPoint {
	dp := pmetric.NewExponentialHistogramDataPoint()
	dp.SetScale(scale)
	dp.SetZeroCount(zero)
	dp.Positive().SetOffset(offset)
	dp.Positive().BucketCounts().FromRaw(counts)
	n := zero
	for _, c := range counts {
		n += c
	}
	dp.SetCount(n)
	return dp
}

// TestExponentialQuantile: Prometheus' reading of a native histogram.
func TestExponentialQuantile(t *testing.T) {
	// Prometheus' own example: the middle of the (1, 2] bucket is 2^0.5
	// with exponential interpolation, 1.5 with linear.
	dp := newPoint(0, 0, 0, 4)
	assert.InDelta(t, math.Sqrt2, ExponentialQuantile(dp, 0.5), 1e-15)
	assert.InDelta(t, 1.5, ExponentialQuantileLinear(dp, 0.5), 1e-15)
	assert.InDelta(t, 2.0, ExponentialQuantile(dp, 1), 1e-15)
	// Empty buckets are skipped; ranks in the zero bucket give 0.
	dp = newPoint(1, 2, -2, 1, 0, 0, 1) // zero ×2, (2^-1, 2^-0.5] ×1, (2^0.5, 2] ×1
	assert.Equal(t, 0.0, ExponentialQuantile(dp, 0.5))
	assert.InDelta(t, math.Exp2(-0.75), ExponentialQuantile(dp, 0.625), 1e-15)
	assert.InDelta(t, math.Exp2(0.75), ExponentialQuantile(dp, 0.875), 1e-15)
	assert.True(t, math.IsNaN(ExponentialQuantile(pmetric.NewExponentialHistogramDataPoint(), 0.5)))
	assert.True(t, math.IsNaN(ExponentialQuantile(dp, 1.5)))
	assert.InDelta(t, 0.0905, BucketWidth(3), 1e-4)
	assert.InDelta(t, 0.0109, BucketWidth(6), 1e-4)
	assert.InDelta(t, 0.0054, BucketWidth(7), 1e-4)
}

// TestExponentialQuantileWithinBucket: on heavy-tailed values, every
// quantile read from the histogram is within one bucket width of numpy's.
func TestExponentialQuantileWithinBucket(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	var xs []float64
	for range 20000 {
		v := 0.2 * math.Exp(0.8*rng.NormFloat64())
		if rng.Float64() < 0.1 {
			v = 0.5 * math.Pow(1-rng.Float64(), -1/1.3)
		}
		xs = append(xs, v)
	}
	slices.Sort(xs)
	for _, maxSize := range []int32{20, 160, 1024} {
		h := NewExponential(maxSize)
		for _, x := range xs {
			h.Add(x)
		}
		m := pmetric.NewMetric()
		dp := h.AppendTo(m).(expoPoint).ExponentialHistogramDataPoint
		for _, p := range []float64{1, 10, 50, 90, 99, 99.9} {
			exact := Percentile(xs, p)
			for name, got := range map[string]float64{
				"exponential": ExponentialQuantile(dp, p/100),
				"linear":      ExponentialQuantileLinear(dp, p/100),
			} {
				rel := math.Abs(got-exact) / exact
				require.Less(t, rel, BucketWidth(dp.Scale()), "max_size %d scale %d p%v %s", maxSize, dp.Scale(), p, name)
			}
		}
	}
}
