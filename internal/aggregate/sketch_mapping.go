// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package aggregate

import (
	"math"
)

// SketchConfig fixes the resolution of a family of sketches; sketches merge
// only within one family.
type SketchConfig struct {
	// SubBuckets per octave.
	SubBuckets int
	// MinValue: smaller positive values count as MinValue (1 ns).
	MinValue float64

	// cellBase[c] is the bucket, within its octave, of the start of cell
	// c of the mantissa [1, 2) cut in 2^sketchCellBits equal cells; edge[j]
	// is bucket j's lower edge, 2^(j/n), and edge[n] = 2. A cell is
	// narrower than a bucket, so it holds at most one edge: a lookup and
	// one comparison find the bucket, from 8 KB of tables that stay in the
	// L1 cache.
	cellBase *[1 << sketchCellBits]uint16
	edge     []float64
	// report[j] is the value reported for bucket j of the octave [1, 2).
	report []float64
}

const sketchCellBits = 12

// NewSketchConfig returns the geometry whose relative error is at most
// alpha, 0 < alpha < 0.05: n = ceil(1/log2((1+alpha)/(1-alpha))) buckets
// per octave.
func NewSketchConfig(alpha float64) *SketchConfig {
	n := int(math.Ceil(1 / math.Log2((1+alpha)/(1-alpha))))
	c := &SketchConfig{SubBuckets: n, MinValue: 1e-9}
	c.edge = make([]float64, n+1)
	for j := range n {
		c.edge[j] = math.Exp2(float64(j) / float64(n))
	}
	c.edge[n] = 2
	c.cellBase = new([1 << sketchCellBits]uint16)
	j := 0
	for cell := range 1 << sketchCellBits {
		start := 1 + float64(cell)/(1<<sketchCellBits)
		for c.edge[j+1] <= start {
			j++
		}
		c.cellBase[cell] = uint16(j)
	}
	c.report = make([]float64, n)
	for j := range n {
		lo, hi := math.Exp2(float64(j)/float64(n)), math.Exp2(float64(j+1)/float64(n))
		c.report[j] = 2 * lo * hi / (lo + hi)
	}
	return c
}

// Alpha is the relative error bound, (r-1)/(r+1) with r = 2^(1/SubBuckets).
func (c *SketchConfig) Alpha() float64 {
	r := math.Exp2(1 / float64(c.SubBuckets))
	return (r - 1) / (r + 1)
}

// New returns an empty sketch.
func (c *SketchConfig) New() *Sketch { return &Sketch{cfg: c} }

// index is the bucket of v > 0, read from the float's bits: the exponent,
// then the mantissa's top bits as the cell (values below MinValue, which is
// far above the subnormals, count as MinValue).
func (c *SketchConfig) index(v float64) int32 {
	if v < c.MinValue {
		v = c.MinValue // a branch, cheaper than max's NaN and signed-zero rules
	}
	b := math.Float64bits(v)
	exp := int32(b>>52) - 1023 // v = m·2^exp, m in [1, 2)
	k := c.cellBase[b>>(52-sketchCellBits)&(1<<sketchCellBits-1)]
	if m := math.Float64frombits(b&(1<<52-1) | 1023<<52); m >= c.edge[k+1] {
		k++
	}
	return exp*int32(c.SubBuckets) + int32(k)
}

func (c *SketchConfig) value(i int32) float64 {
	n := int32(c.SubBuckets)
	exp, sub := i/n, i%n
	if sub < 0 {
		exp, sub = exp-1, sub+n
	}
	return math.Ldexp(c.report[sub], int(exp))
}
