// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"math"
	"slices"
	"sync/atomic"

	"github.com/llmslo/llmslo/internal/aggregate"
	"github.com/llmslo/llmslo/tools/internal/report/schema"
)

// A pool holds values whose distribution is reported over all of them
// (inter-token gaps, pooled over requests as vLLM and the connector pool
// them). Unlike the per-request values, their number grows with output
// chunks, not requests, so the pools share a budget: while it lasts every
// value is kept (8 bytes, 12 with a weight) and percentiles are exact; once
// it is spent a pool moves its values into the connector's sketch (every
// order statistic within 0.39%) and says so (Exact false in the report).
type pool struct {
	// vals, and weights while weighted (before that every weight is 1),
	// in blocks: the ordered apply adds a stream's gaps at a time, and a
	// slice of millions of gaps regrown by appends is copied about four
	// times over (see blocks).
	vals     blocks[float64]
	weights  blocks[uint32]
	weighted bool
	sk       *aggregate.Sketch
	budget   *atomic.Int64
	n        uint64 // values, weights counted
}

var sketchConfig = aggregate.NewSketchConfig(0.01)

func newPool(budget *atomic.Int64) *pool { return &pool{budget: budget} }

// poolable reports whether a pool keeps v with weight w: a duration of w
// tokens.
func poolable(v float64, w uint32) bool {
	return w != 0 && !math.IsNaN(v) && !math.IsInf(v, 0) && v >= 0
}

// appendPoolable appends v to vals when a pool keeps it (weight 1).
func appendPoolable(vals []float64, v float64) []float64 {
	if poolable(v, 1) {
		return append(vals, v)
	}
	return vals
}

// add records v with weight w (w copies of v).
func (p *pool) add(v float64, w uint32) {
	if !poolable(v, w) {
		return
	}
	p.n += uint64(w)
	if p.sk != nil {
		for range w {
			p.sk.Add(v)
		}
		return
	}
	if p.budget.Add(-1) < 0 {
		p.budget.Add(1)
		p.toSketch()
		for range w {
			p.sk.Add(v)
		}
		return
	}
	if w != 1 {
		p.weigh()
	}
	p.vals.add(v)
	if p.weighted {
		p.weights.add(w)
	}
}

// addAll records vals, each poolable, with weights ws (nil: every weight
// 1), as add would one by one: in one append while the budget lasts.
func (p *pool) addAll(vals []float64, ws []uint32) {
	if len(vals) == 0 {
		return
	}
	if p.sk != nil || p.budget.Add(-int64(len(vals))) < 0 {
		if p.sk == nil {
			p.budget.Add(int64(len(vals)))
		}
		for i, v := range vals {
			w := uint32(1)
			if ws != nil {
				w = ws[i]
			}
			p.add(v, w)
		}
		return
	}
	if ws != nil {
		p.weigh()
	}
	p.vals.addSlice(vals)
	switch {
	case ws != nil:
		p.weights.addSlice(ws)
		for _, w := range ws {
			p.n += uint64(w)
		}
		return
	case p.weighted:
		for range vals {
			p.weights.add(1)
		}
	}
	p.n += uint64(len(vals))
}

// weigh starts keeping weights, the values so far weighing 1 each.
func (p *pool) weigh() {
	if p.weighted {
		return
	}
	p.weighted = true
	for range p.vals.count() {
		p.weights.add(1)
	}
}

func (p *pool) toSketch() {
	p.sk = sketchConfig.New()
	for i, v := range p.vals.all() {
		for range p.weight(i) {
			p.sk.Add(*v)
		}
	}
	p.budget.Add(int64(p.vals.count()))
	p.vals, p.weights, p.weighted = blocks[float64]{}, blocks[uint32]{}, false
}

func (p *pool) weight(i int) uint32 {
	if !p.weighted {
		return 1
	}
	return *p.weights.at(i)
}

// summary is the pool's distribution with numpy's statistics: the mean of
// the expanded values and np.percentile's linear method (exact while the
// values are kept).
func (p *pool) summary() schema.Dist { return summarize(p) }

// summarize is the distribution of the union of pools.
func summarize(ps ...*pool) schema.Dist {
	var u sample
	weighted := false
	for _, p := range ps {
		u.n += p.n
		weighted = weighted || p.weighted
		if p.sk != nil && u.sk == nil {
			u.sk = sketchConfig.New()
		}
	}
	if len(ps) == 1 && ps[0].sk != nil {
		u.sk = ps[0].sk // its own sketch, not a merged copy
		return u.dist()
	}
	if u.sk == nil {
		u.vals = make([]float64, 0, kept(ps))
		if weighted {
			u.weights = make([]uint32, 0, kept(ps))
		}
	}
	for _, p := range ps {
		switch {
		case u.sk != nil && p.sk != nil:
			u.sk.Merge(p.sk)
		case u.sk != nil:
			for i, v := range p.vals.all() {
				for range p.weight(i) {
					u.sk.Add(*v)
				}
			}
		default:
			u.vals = p.vals.appendTo(u.vals)
			if weighted {
				u.weights = p.appendWeights(u.weights)
			}
		}
	}
	return u.dist()
}

// appendWeights appends the weight of each value to dst.
func (p *pool) appendWeights(dst []uint32) []uint32 {
	if p.weighted {
		return p.weights.appendTo(dst)
	}
	for range p.vals.count() {
		dst = append(dst, 1)
	}
	return dst
}

// A sample is pools' values, each in one slice, to sort: weights nil when
// every weight is 1; sk, when set, holds them instead.
type sample struct {
	vals    []float64
	weights []uint32
	sk      *aggregate.Sketch
	n       uint64
}

// dist is the sample's distribution; it sorts s.vals when every weight is
// 1.
func (s *sample) dist() schema.Dist {
	d := schema.Dist{Count: int64(s.n), Exact: s.sk == nil}
	if s.n == 0 {
		d.Mean, d.P50, d.P90, d.P99, d.P999, d.Max = schema.NaN(), schema.NaN(), schema.NaN(), schema.NaN(), schema.NaN(), schema.NaN()
		return d
	}
	if s.sk != nil {
		d.Mean, d.Max = schema.NaN(), schema.Num(s.sk.Quantile(1))
		d.P50, d.P90 = schema.Num(s.sk.Quantile(0.5)), schema.Num(s.sk.Quantile(0.9))
		d.P99, d.P999 = schema.Num(s.sk.Quantile(0.99)), schema.Num(s.sk.Quantile(0.999))
		return d
	}
	if s.weights == nil {
		d.Mean = schema.Num(npMean(s.vals))
		slices.Sort(s.vals)
		fill(&d, s.vals)
		return d
	}
	idx := make([]int, len(s.vals))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmpFloat(s.vals[a], s.vals[b]) })
	vals := make([]float64, len(idx))
	cum := make([]uint64, len(idx))
	var c uint64
	prod := make([]float64, len(s.vals))
	for k, i := range idx {
		vals[k] = s.vals[i]
		c += uint64(s.weights[i])
		cum[k] = c
	}
	// The weighted mean sums value x weight (numpy on the expanded array
	// adds the copies one by one: equal to float rounding, and this costs
	// one step per value, not per token).
	for i, v := range s.vals {
		prod[i] = v * float64(s.weights[i])
	}
	d.Mean = schema.Num(npSum(prod) / float64(s.n))
	d.P50, d.P90 = schema.Num(weightedPercentile(vals, cum, 50)), schema.Num(weightedPercentile(vals, cum, 90))
	d.P99, d.P999 = schema.Num(weightedPercentile(vals, cum, 99)), schema.Num(weightedPercentile(vals, cum, 99.9))
	d.Max = schema.Num(vals[len(vals)-1])
	return d
}

// fill sets d's percentiles and max from sorted values.
func fill(d *schema.Dist, sorted []float64) {
	d.P50 = schema.Num(npPercentile(sorted, 50))
	d.P90 = schema.Num(npPercentile(sorted, 90))
	d.P99 = schema.Num(npPercentile(sorted, 99))
	d.P999 = schema.Num(npPercentile(sorted, 99.9))
	d.Max = schema.Num(sorted[len(sorted)-1])
}

// kept is the number of values the pools keep (exact pools only).
func kept(ps []*pool) int {
	n := 0
	for _, p := range ps {
		n += p.vals.count()
	}
	return n
}

// sortedUnion returns the values the pools keep, sorted (exact pools'
// values only, their weights aside), for plots.
func sortedUnion(ps ...*pool) []float64 {
	s := make([]float64, 0, kept(ps))
	for _, p := range ps {
		s = p.vals.appendTo(s)
	}
	slices.Sort(s)
	return s
}

// thin keeps at most limit evenly spaced order statistics of sorted values
// (first and last included), enough to draw a CDF.
func thin(sorted []float64, limit int) []float64 {
	if len(sorted) <= limit || limit < 2 {
		return sorted
	}
	out := make([]float64, limit)
	for i := range out {
		out[i] = sorted[i*(len(sorted)-1)/(limit-1)]
	}
	return out
}
