// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package aggregate

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/lightstep/go-expohisto/mapping/logarithm"
	"github.com/lightstep/go-expohisto/structure"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// TestIndexMatchesReference: the table mapping gives the bucket that
// go-expohisto's logarithm mapping gives, at scale 8, across the double
// range that latencies and token counts use, including exact powers of two.
func TestIndexMatchesReference(t *testing.T) {
	ref, err := logarithm.NewMapping(MaxExportScale)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(3, 3))
	values := []float64{1, 2, 0.5, 0.25, 1024, math.Exp2(1.0 / 256), math.Nextafter(1, 2), math.Nextafter(1, 0)}
	for range 200000 {
		values = append(values, math.Pow(10, -9+18*rng.Float64()))
	}
	mismatch := 0
	for _, v := range values {
		if index8(v) != ref.MapToIndex(v) {
			mismatch++
			// At most a floating-point hair from a boundary.
			lower, err := ref.LowerBoundary(ref.MapToIndex(v))
			require.NoError(t, err)
			upper, err := ref.LowerBoundary(ref.MapToIndex(v) + 1)
			require.NoError(t, err)
			near := math.Min(math.Abs(v-lower), math.Abs(v-upper)) / v
			assert.Less(t, near, 1e-12, "v=%g ours %d reference %d", v, index8(v), ref.MapToIndex(v))
		}
	}
	t.Logf("%d of %d values map to a different bucket, each within 1e-12 of a boundary", mismatch, len(values))
}

// TestExponentialMatchesGoExpohisto: same values, same max size: the same
// scale and bucket counts as the structure contrib's connectors use.
func TestExponentialMatchesGoExpohisto(t *testing.T) {
	for _, maxSize := range []int32{20, 160, 1024} {
		ours := NewExponential(maxSize)
		var ref structure.Histogram[float64]
		ref.Init(structure.NewConfig(structure.WithMaxSize(maxSize)))
		rng := rand.New(rand.NewPCG(4, uint64(maxSize)))
		for range 50000 {
			v := 0.05 * math.Exp(1.2*rng.NormFloat64())
			ours.Add(v)
			ref.Update(v)
		}
		ours.Add(0)
		ref.Update(0)
		assert.Equal(t, min(ref.Scale(), MaxExportScale), ours.Scale(), "max_size %d", maxSize)
		m := pmetric.NewMetric()
		dp := ours.AppendTo(m).(expoPoint)
		assert.Equal(t, ref.Count(), dp.Count())
		assert.Equal(t, ref.ZeroCount(), dp.ZeroCount())
		assert.InEpsilon(t, ref.Sum(), dp.Sum(), 1e-12)
		assert.Equal(t, ref.Min(), dp.Min())
		assert.Equal(t, ref.Max(), dp.Max())
		if ref.Scale() <= MaxExportScale {
			// Same scale: identical buckets.
			var want []uint64
			for i := uint32(0); i < ref.Positive().Len(); i++ {
				want = append(want, ref.Positive().At(i))
			}
			assert.Equal(t, ref.Positive().Offset(), dp.Positive().Offset())
			assert.Equal(t, want, dp.Positive().BucketCounts().AsRaw())
		}
	}
}

// TestAddNEqualsRepeatedAdd: a value with weight n is n values, in both
// histogram shapes, including a weight that forces a downscale.
func TestAddNEqualsRepeatedAdd(t *testing.T) {
	values := []struct {
		v float64
		n uint64
	}{{0.02, 3}, {0, 2}, {1e-4, 1}, {40, 7}, {0.5, 1000}}
	for name, mk := range map[string]func() Histogram{
		"exponential": func() Histogram { return NewExponential(20) },
		"explicit":    func() Histogram { return NewExplicit([]float64{0.01, 0.1, 1, 10}) },
	} {
		a, b := mk(), mk()
		for _, x := range values {
			a.AddN(x.v, x.n)
			for range x.n {
				b.Add(x.v)
			}
		}
		ma, mb := pmetric.NewMetric(), pmetric.NewMetric()
		a.AppendTo(ma)
		b.AppendTo(mb)
		assert.Equal(t, a.Count(), b.Count(), name)
		// Sums differ only by rounding: v·n against n additions.
		if ma.Type() == pmetric.MetricTypeExponentialHistogram {
			pa, pb := ma.ExponentialHistogram().DataPoints().At(0), mb.ExponentialHistogram().DataPoints().At(0)
			assert.InEpsilon(t, pb.Sum(), pa.Sum(), 1e-12)
			assert.Equal(t, pb.Scale(), pa.Scale())
			assert.Equal(t, pb.Positive().BucketCounts().AsRaw(), pa.Positive().BucketCounts().AsRaw())
			assert.Equal(t, pb.ZeroCount(), pa.ZeroCount())
		} else {
			pa, pb := ma.Histogram().DataPoints().At(0), mb.Histogram().DataPoints().At(0)
			assert.InEpsilon(t, pb.Sum(), pa.Sum(), 1e-12)
			assert.Equal(t, pb.BucketCounts().AsRaw(), pa.BucketCounts().AsRaw())
		}
	}
}

// index8Frexp is the mapping as first written, through math.Frexp and a
// table of one boundary per cell: the reference the bit-reading index8
// must equal exactly, subnormals included.
func index8Frexp(v float64) int32 {
	frac, exp := math.Frexp(v)
	m := 2 * frac
	e := int32(exp - 1)
	if m == 1 {
		return e*subBuckets - 1
	}
	c := int((m - 1) * (1 << cellBits))
	lo, hi := 1+float64(c)/(1<<cellBits), 1+float64(c+1)/(1<<cellBits)
	k := int32(0)
	for j := 1; j < subBuckets && math.Exp2(float64(j)/subBuckets) < lo; j++ {
		k = int32(j)
	}
	if b := math.Exp2(float64(k+1) / subBuckets); k+1 < subBuckets && b < hi && m > b {
		k++
	}
	return e*subBuckets + k
}

// TestIndex8EqualsFrexpMapping: the same bucket for every value, at every
// boundary and its neighbors, at powers of two, for subnormals and the
// largest double.
func TestIndex8EqualsFrexpMapping(t *testing.T) {
	values := []float64{math.SmallestNonzeroFloat64, 1e-310, math.Ldexp(1, -1030), math.MaxFloat64, 1, 0.5, 2, 3}
	for e := -40; e <= 40; e += 7 {
		for j := range subBuckets + 1 {
			b := math.Ldexp(math.Exp2(float64(j)/subBuckets), e)
			values = append(values, b, math.Nextafter(b, 0), math.Nextafter(b, math.Inf(1)))
		}
	}
	rng := rand.New(rand.NewPCG(5, 5))
	for range 20000 {
		values = append(values, math.Pow(10, -320+628*rng.Float64()))
	}
	for _, v := range values {
		if got, want := index8(v), index8Frexp(v); got != want {
			t.Fatalf("index8(%g) = %d, want %d", v, got, want)
		}
	}
}
