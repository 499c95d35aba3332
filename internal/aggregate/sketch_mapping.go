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
	// edgeFrac[j] is edge[j]'s fraction (its mantissa shifted to the top
	// of the word; the largest uint64 for edge[n] = 2, which no number in
	// [1, 2) reaches), compared as an integer with a value's.
	edgeFrac []uint64
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
	c.edgeFrac = make([]uint64, n+1)
	for j, x := range c.edge[:n] {
		c.edgeFrac[j] = math.Float64bits(x) << 12
	}
	c.edgeFrac[n] = math.MaxUint64
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

// index is the bucket of v > 0 (values below MinValue, which is far
// above the subnormals, count as MinValue).
func (c *SketchConfig) index(v float64) int32 {
	if v < c.MinValue {
		v = c.MinValue // a branch, cheaper than max's NaN and signed-zero rules
	}
	return sketchIndex(c.cellBase, c.edgeFrac, int32(c.SubBuckets), math.Float64bits(v))
}

// sketchIndex is the bucket of the normal v > 0 whose bits are b, with
// n buckets per octave: the exponent, then the fraction's top bits as the
// cell and one comparison with the boundary inside it (fractions order as
// the numbers in [1, 2] do; shifted to the top of the word, they need no
// mask). The tables are arguments, not a struct, so that a loop over many
// values holds them in registers.
func sketchIndex(cellBase *[1 << sketchCellBits]uint16, edgeFrac []uint64, n int32, b uint64) int32 {
	frac := b << 12 // v = (1 + frac/2^64)·2^e
	k := uint32(cellBase[frac>>(64-sketchCellBits)])
	if frac >= edgeFrac[k+1] {
		k++
	}
	return (int32(b>>52)-1023)*n + int32(k)
}

func (c *SketchConfig) value(i int32) float64 {
	n := int32(c.SubBuckets)
	exp, sub := i/n, i%n
	if sub < 0 {
		exp, sub = exp-1, sub+n
	}
	return math.Ldexp(c.report[sub], int(exp))
}
