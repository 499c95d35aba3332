// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package aggregate

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestSketchMapping: every value is reported within the relative error
// bound, across twelve decades, at octave edges and at every bucket edge
// (where the error is largest), and the bound is reached there: it is the
// tight bound, not a loose one.
func TestSketchMapping(t *testing.T) {
	cfg := NewSketchConfig(0.0039)
	assert.Equal(t, 89, cfg.SubBuckets)
	assert.InDelta(t, 0.003894, cfg.Alpha(), 1e-6)
	assert.Less(t, cfg.Alpha(), 0.0039)
	rng := rand.New(rand.NewPCG(1, 1))
	values := []float64{1e-6, 0.5, 1, 2, 4, 0.25, math.Nextafter(1, 0), math.Nextafter(2, 0), 1e6}
	for range 100000 {
		values = append(values, math.Pow(10, -6+12*rng.Float64()))
	}
	for e := -3; e <= 3; e++ {
		for j := range cfg.SubBuckets {
			edge := math.Ldexp(math.Exp2(float64(j)/float64(cfg.SubBuckets)), e)
			values = append(values, edge, math.Nextafter(edge, 0), math.Nextafter(edge, math.Inf(1)))
		}
	}
	worst := 0.0
	for _, v := range values {
		got := cfg.value(cfg.index(v))
		rel := math.Abs(got-v) / v
		worst = max(worst, rel)
		assert.LessOrEqual(t, rel, cfg.Alpha()+1e-12, "%g -> %g", v, got)
	}
	assert.Greater(t, worst, cfg.Alpha()-1e-9, "the bound is reached at bucket edges")
}

// TestSketchWeightsAndWidths: AddN(v, n) equals n Adds; counters widen
// from one byte to two and four as counts grow, keeping every count, and
// saturate instead of wrapping.
func TestSketchWeightsAndWidths(t *testing.T) {
	cfg := NewSketchConfig(0.0039)
	a, b := cfg.New(), cfg.New()
	for _, x := range []struct {
		v float64
		n uint64
	}{{0.01, 3}, {0.5, 300}, {2, 70000}, {0, 2}} {
		a.AddN(x.v, x.n)
		for range x.n {
			b.Add(x.v)
		}
	}
	assert.Equal(t, b.Count(), a.Count())
	assert.Equal(t, uint8(4), a.width, "70,000 in one bucket needs four bytes")
	for _, q := range []float64{0, 0.001, 0.01, 0.5, 0.9, 1} {
		assert.Equal(t, b.Quantile(q), a.Quantile(q), "q %v", q)
	}
	small := cfg.New()
	small.AddN(1, 255)
	assert.Equal(t, uint8(1), small.width)
	small.Add(1)
	assert.Equal(t, uint8(2), small.width)
	assert.Equal(t, uint64(256), small.at(0))
	huge := cfg.New()
	huge.AddN(1, math.MaxUint32)
	huge.AddN(1, 10)
	assert.Equal(t, uint64(math.MaxUint32), huge.at(0), "saturates")

	// A range that grows on both sides keeps its counts.
	grow := cfg.New()
	for _, v := range []float64{1, 1e-3, 1e3, 1e-6, 1e6} {
		grow.Add(v)
	}
	assert.Equal(t, uint64(5), grow.Count())
	assert.InEpsilon(t, 1.0, grow.Quantile(0.5), cfg.Alpha()+1e-12)
	assert.InEpsilon(t, 1e-6, grow.Quantile(0), cfg.Alpha()+1e-12)
	assert.InEpsilon(t, 1e6, grow.Quantile(1), cfg.Alpha()+1e-12)
	grow.Reset()
	grow.Add(7)
	assert.InEpsilon(t, 7.0, grow.Quantile(0.5), cfg.Alpha()+1e-12, "no stale count after Reset")
}

// TestSketchQuantile: the numpy "linear" definition, within the bound, on
// the reference micro-vector and on a heavy-tailed sample; zeros are exact.
func TestSketchQuantile(t *testing.T) {
	cfg := NewSketchConfig(0.0039)
	s := cfg.New()
	for _, v := range []float64{10, 20, 30, 40} {
		s.Add(v)
	}
	for p, want := range map[float64]float64{25: 17.5, 50: 25, 90: 37, 95: 38.5, 99: 39.699999999999996} {
		assert.InEpsilon(t, want, s.Quantile(p/100), cfg.Alpha(), "p%v", p)
		assert.Equal(t, want, Percentile([]float64{10, 20, 30, 40}, p))
	}
	z := cfg.New()
	z.Add(0)
	z.Add(0)
	z.Add(math.NaN())
	z.Add(-1)
	assert.Equal(t, uint64(2), z.Count())
	assert.Equal(t, 0.0, z.Quantile(0.99))

	rng := rand.New(rand.NewPCG(2, 2))
	var xs []float64
	h := cfg.New()
	for range 50000 {
		v := 0.05 * math.Pow(1-rng.Float64(), -1/1.3)
		xs = append(xs, v)
		h.Add(v)
	}
	slices.Sort(xs)
	for _, p := range []float64{1, 50, 90, 99, 99.9} {
		exact := Percentile(xs, p)
		assert.InEpsilon(t, exact, h.Quantile(p/100), cfg.Alpha()+1e-9, "p%v", p)
	}
}

// TestWindowSlides: values older than the window drop out, a sub-window at
// a time; merging sub-windows equals one sketch of the same values.
func TestWindowSlides(t *testing.T) {
	cfg := NewSketchConfig(0.0039)
	w := NewWindow(cfg, time.Minute, 6)
	m := cfg.New()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 60 {
		w.Add(t0.Add(time.Duration(i)*time.Second), float64(i+1))
	}
	assert.Equal(t, uint64(60), w.MergeInto(m, t0.Add(59*time.Second)).Count())
	// 30 s later, the first three 10 s sub-windows have left the window.
	assert.Equal(t, uint64(30), w.MergeInto(m, t0.Add(90*time.Second)).Count())
	assert.Equal(t, uint64(0), w.MergeInto(m, t0.Add(10*time.Minute)).Count())

	r := NewRatio(time.Minute)
	for i := range 10 {
		r.Add(t0.Add(time.Duration(i)*time.Second), i%4 != 0)
	}
	v, ok := r.Value(t0.Add(10 * time.Second))
	assert.True(t, ok)
	assert.Equal(t, 0.7, v)
	_, ok = r.Value(t0.Add(time.Hour))
	assert.False(t, ok)
}

// TestWindowHeaviest: the heaviest call is remembered per sub-window and
// leaves the window with it; AddAll counts one call's total weight, and
// invalid values weigh nothing.
func TestWindowHeaviest(t *testing.T) {
	cfg := NewSketchConfig(0.0039)
	w := NewWindow(cfg, time.Minute, 6)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	assert.Equal(t, uint64(0), w.Heaviest(t0))
	w.Add(t0, 1)
	w.AddN(t0, 2, 7)
	w.AddN(t0, math.NaN(), 50)
	assert.Equal(t, uint64(7), w.Heaviest(t0))
	w.AddAll(t0.Add(20*time.Second), []float64{1, 2, 3}, []uint64{1, 2, 3}, 2)
	assert.Equal(t, uint64(12), w.Heaviest(t0.Add(20*time.Second)))
	w.Add(t0.Add(95*time.Second), 1)
	assert.Equal(t, uint64(1), w.Heaviest(t0.Add(95*time.Second)), "both heavy sub-windows left the window")
}

func TestMulSat(t *testing.T) {
	for _, tt := range []struct{ a, b, want uint64 }{
		{3, 4, 12},
		{1 << 24, 1 << 39, 1 << 63},
		{1 << 24, 1 << 40, math.MaxUint64},
		{math.MaxUint64, 2, math.MaxUint64},
		{0, math.MaxUint64, 0},
	} {
		if got := MulSat(tt.a, tt.b); got != tt.want {
			t.Errorf("MulSat(%d, %d) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
