// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package aggregate

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// addAllCase is a span's gaps as the connector passes them: values,
// weights (empty: one token each) and the span's adjusted count.
type addAllCase struct {
	name    string
	vs      []float64
	weights []uint64
	scale   uint64
}

func addAllCases() []addAllCase {
	rng := rand.New(rand.NewPCG(6, 6))
	wide := make([]float64, 300)
	for i := range wide {
		wide[i] = math.Pow(10, -9+12*rng.Float64()) // forces downscales at 160 buckets
	}
	return []addAllCase{
		{"one token each", []float64{0.007, 0.0071, 0.0072, 0.0071, 0.007}, nil, 1},
		{"weighted and sampled", []float64{0.02, 0.5, 0.02, 1e-4}, []uint64{3, 1, 200, 7}, 10},
		{"invalid values skipped", []float64{0.1, math.NaN(), -1, math.Inf(1), 0, 5e-324, 0.1, math.Inf(-1), -5e-324}, nil, 2},
		{"negative zero", []float64{math.Copysign(0, -1), 0.5, math.Copysign(0, -1)}, nil, 1},
		{"negative zero beside zeros", []float64{0, math.Copysign(0, -1), 0, math.Copysign(0, -1), 0.25, 0}, nil, 1},
		{"zeros then negative zero", []float64{math.Copysign(0, -1), 0, 0, 1e-300, 0}, nil, 3},
		{"zero scale adds nothing", []float64{0.1, 0.2}, nil, 0},
		{"counts that widen the sketch", []float64{1, 1, 2}, []uint64{200, 100, 70000}, 1},
		{"a wide range", wide, nil, 3},
		{"a scale wider than a byte, then two", []float64{0.1, 0.2, 0.1, 0.1}, nil, 70000},
	}
}

// TestExponentialAddAllEqualsAddN: AddAll leaves the histogram exactly as
// AddN of each value in order does, the float sum to the bit.
func TestExponentialAddAllEqualsAddN(t *testing.T) {
	for _, tc := range addAllCases() {
		a, b := NewExponential(160), NewExponential(160)
		a.AddAll(tc.vs, tc.weights, tc.scale)
		for i, v := range tc.vs {
			b.AddN(v, MulSat(weightAt(tc.weights, i), tc.scale))
		}
		assert.Equal(t, b, a, tc.name)
		assert.Equal(t, math.Float64bits(b.sum), math.Float64bits(a.sum), tc.name)
	}
}

// TestExplicitAddAllEqualsAddN: the same for explicit bounds. Explicit
// takes what it is given (its callers validate), so the invalid values'
// case, whose NaN sum equals nothing, is left out.
func TestExplicitAddAllEqualsAddN(t *testing.T) {
	bounds := []float64{0.005, 0.01, 0.1, 1}
	for _, tc := range addAllCases() {
		if tc.name == "invalid values skipped" {
			continue
		}
		a, b := NewExplicit(bounds), NewExplicit(bounds)
		a.AddAll(tc.vs, tc.weights, tc.scale)
		for i, v := range tc.vs {
			b.AddN(v, MulSat(weightAt(tc.weights, i), tc.scale))
		}
		assert.Equal(t, b, a, tc.name)
	}
}

// TestSketchAddAllEqualsAddN: the same for the window sketches, through
// Window.AddAll, including counters that widen mid-batch.
func TestSketchAddAllEqualsAddN(t *testing.T) {
	cfg := NewSketchConfig(0.0039)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range addAllCases() {
		w := NewWindow(cfg, time.Minute, 6)
		w.AddAll(now, tc.vs, tc.weights, tc.scale)
		b := cfg.New()
		for i, v := range tc.vs {
			b.AddN(v, MulSat(weightAt(tc.weights, i), tc.scale))
		}
		assert.Equal(t, b, w.slot(now), tc.name)
	}
}

// TestValid: the bit test agrees with v >= 0 && v <= math.MaxFloat64.
func TestValid(t *testing.T) {
	for _, v := range []float64{0, math.Copysign(0, -1), 5e-324, -5e-324, 1, -1, math.MaxFloat64, -math.MaxFloat64,
		math.Inf(1), math.Inf(-1), math.NaN(), -math.NaN(), math.Float64frombits(0x7ff0_0000_0000_0001)} {
		assert.Equal(t, v >= 0 && v <= math.MaxFloat64, valid(v), "%g (%#x)", v, math.Float64bits(v))
	}
}

func weightAt(weights []uint64, i int) uint64 {
	if len(weights) == 0 {
		return 1
	}
	return weights[i]
}

// BenchmarkAddGaps: the per-gap cost of a span's inter-token gaps in the
// ITL histogram and the ITL window sketch, as the connector records them.
func BenchmarkAddGaps(b *testing.B) {
	gaps := make([]float64, 256)
	for i := range gaps {
		gaps[i] = 0.007 + 0.0001*float64(i%5) + 0.00001*float64(i%37)
	}
	cfg := NewSketchConfig(0.0039)
	h, w := NewExponential(160), NewWindow(cfg, time.Minute, 6)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b.ResetTimer()
	for b.Loop() {
		h.AddAll(gaps, nil, 1)
		w.AddAll(now, gaps, nil, 1)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(gaps)), "ns/gap")
}

// TestExponentialScaleFloor: the widest range of doubles fits two buckets
// at scale -11, so the scale never goes below it (addRun relies on a shift
// under 32).
func TestExponentialScaleFloor(t *testing.T) {
	h := NewExponential(2)
	h.AddAll([]float64{math.SmallestNonzeroFloat64, math.MaxFloat64, 1}, nil, 1)
	assert.Equal(t, int32(-11), h.Scale())
	assert.Equal(t, uint64(3), h.Count())
}

// BenchmarkAddGapsWeighted: BenchmarkAddGaps with token-aware weights
// (1 to 4 tokens a chunk), the path that goes value by value.
func BenchmarkAddGapsWeighted(b *testing.B) {
	gaps, weights := make([]float64, 256), make([]uint64, 256)
	for i := range gaps {
		gaps[i] = 0.007 + 0.0001*float64(i%5) + 0.00001*float64(i%37)
		weights[i] = uint64(1 + i%4)
	}
	cfg := NewSketchConfig(0.0039)
	h, w := NewExponential(160), NewWindow(cfg, time.Minute, 6)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b.ResetTimer()
	for b.Loop() {
		h.AddAll(gaps, weights, 1)
		w.AddAll(now, gaps, weights, 1)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(gaps)), "ns/gap")
}
