// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/llmslo/llmslo/internal/report/schema"
)

// TestWeightedPoolIsExpandedNumpy: a gap of weight k (a k-token chunk,
// token-aware) is k copies of gap/k; the pool's percentiles equal numpy's on
// the expanded values, bit for bit.
func TestWeightedPoolIsExpandedNumpy(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	var budget atomic.Int64
	budget.Store(1 << 20)
	p := newPool(&budget)
	var expanded []float64
	for range 3000 {
		v := float64(1+rng.IntN(50_000_000)) / 1e9
		w := uint32(1)
		if rng.IntN(4) == 0 {
			w = uint32(1 + rng.IntN(5))
		}
		p.add(v, w)
		for range w {
			expanded = append(expanded, v)
		}
	}
	d := p.summary()
	slices.Sort(expanded)
	assert.True(t, d.Exact)
	assert.Equal(t, int64(len(expanded)), d.Count)
	assert.Equal(t, schema.Num(npPercentile(expanded, 50)), d.P50)
	assert.Equal(t, schema.Num(npPercentile(expanded, 90)), d.P90)
	assert.Equal(t, schema.Num(npPercentile(expanded, 99)), d.P99)
	assert.Equal(t, schema.Num(npPercentile(expanded, 99.9)), d.P999)
	assert.Equal(t, schema.Num(expanded[len(expanded)-1]), d.Max)
	assert.InEpsilon(t, npMean(expanded), float64(d.Mean), 1e-12)
}

// TestPoolBudget: beyond the budget a pool moves to the sketch, within 1%.
func TestPoolBudget(t *testing.T) {
	var budget atomic.Int64
	budget.Store(1000)
	p := newPool(&budget)
	var vals []float64
	for i := range 5000 {
		v := float64(1+i%997) / 1000
		p.add(v, 1)
		vals = append(vals, v)
	}
	d := p.summary()
	slices.Sort(vals)
	assert.False(t, d.Exact)
	assert.Equal(t, int64(5000), d.Count)
	assert.InEpsilon(t, npPercentile(vals, 99), float64(d.P99), 0.01)
	assert.Equal(t, int64(1000), budget.Load(), "the budget is given back")
}
