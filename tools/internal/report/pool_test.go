// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/llmslo/llmslo/tools/internal/report/schema"
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

// TestAddAllIsAddOneByOne: adding a run of values at once leaves a pool
// and the shared budget as adding them one by one does, within the budget,
// across its end and past it, with weights or without.
func TestAddAllIsAddOneByOne(t *testing.T) {
	vals := []float64{0.011, 0.009, 0.020, 0.013, 0.007, 0.015, 0.010}
	weights := []uint32{1, 3, 1, 2, 1, 1, 4}
	for _, c := range []struct {
		name    string
		budget  int64
		weights []uint32
	}{
		{"within the budget", 100, nil},
		{"within the budget, weighted", 100, weights},
		{"the budget runs out in the run", 10, nil},
		{"the budget runs out in the run, weighted", 10, weights},
		{"past the budget", 3, weights},
	} {
		t.Run(c.name, func(t *testing.T) {
			var oneBudget, allBudget atomic.Int64
			oneBudget.Store(c.budget)
			allBudget.Store(c.budget)
			one, all := newPool(&oneBudget), newPool(&allBudget)
			for range 2 {
				for i, v := range vals {
					w := uint32(1)
					if c.weights != nil {
						w = c.weights[i]
					}
					one.add(v, w)
				}
				all.addAll(vals, c.weights)
			}
			assert.Equal(t, one.vals.appendTo(nil), all.vals.appendTo(nil))
			assert.Equal(t, one.weighted, all.weighted)
			assert.Equal(t, one.appendWeights(nil), all.appendWeights(nil))
			assert.Equal(t, one.n, all.n)
			assert.Equal(t, one.sk != nil, all.sk != nil)
			assert.Equal(t, oneBudget.Load(), allBudget.Load())
			assert.Equal(t, fmt.Sprintf("%+v", one.summary()), fmt.Sprintf("%+v", all.summary())) // NaN means alike
		})
	}
}
