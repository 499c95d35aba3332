// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"math"
	"slices"

	"github.com/llmslo/llmslo/internal/report/schema"
)

// latencyAcc holds the values of one group's requests, per metric.
type latencyAcc struct {
	n    int64
	vals [numMetrics][]float64
}

// dists turns the values into distributions; ITL's comes from the pooled
// gaps.
func (a *latencyAcc) dists(gaps schema.Dist) map[string]schema.Dist {
	out := map[string]schema.Dist{}
	for m := range numMetrics {
		if m == mITL {
			out[metricIDs[m]] = gaps
			continue
		}
		out[metricIDs[m]] = exactDist(a.vals[m])
	}
	return out
}

// latencyValues gathers every request's latencies, over all and per group;
// failed requests count but give no values.
func (e *Engine) latencyValues() (all *latencyAcc, per []*latencyAcc) {
	all = &latencyAcc{}
	per = make([]*latencyAcc, len(e.groups))
	for k := range e.recs {
		rec := &e.recs[k]
		g := per[rec.group]
		if g == nil {
			g = &latencyAcc{}
			per[rec.group] = g
		}
		all.n++
		g.n++
		if rec.failed {
			continue
		}
		for m, v := range [numMetrics]float64{rec.ttft, rec.tpot, math.NaN(), rec.e2e, rec.queue} {
			if !math.IsNaN(v) {
				all.vals[m] = append(all.vals[m], v)
				g.vals[m] = append(g.vals[m], v)
			}
		}
	}
	return all, per
}

// latencyParts are the latency table's parts, computed by tasks that
// build runs at once: the row over all requests, and each group's row
// with its CDFs.
type latencyParts struct {
	tasks  []func()
	all    schema.LatencyGroup
	groups []schema.LatencyGroup // in order; Requests 0: no request
	cdfs   [][]schema.CDF
}

// latencySections sets up the exact distributions, overall and per group
// in order, over successful requests, and the CDFs the HTML plots draw.
func (e *Engine) latencySections(order []uint32) *latencyParts {
	all, per := e.latencyValues()
	lp := &latencyParts{groups: make([]schema.LatencyGroup, len(order)), cdfs: make([][]schema.CDF, len(order))}
	lp.tasks = append(lp.tasks, func() {
		var allPools []*pool
		allPools = append(allPools, e.gapsDefs...)
		allPools = append(allPools, e.gapsRest...)
		lp.all = schema.LatencyGroup{Group: schema.Group{}, Requests: all.n, Metrics: all.dists(summarize(allPools...))}
	})
	for k, gi := range order {
		if per[gi] == nil {
			continue
		}
		lp.tasks = append(lp.tasks, func() {
			lp.groups[k] = schema.LatencyGroup{Group: e.groups[gi], Requests: per[gi].n,
				Metrics: per[gi].dists(summarize(e.gapsDefs[gi], e.gapsRest[gi]))}
			lp.cdfs[k] = e.groupCDFs(gi, per[gi])
		})
	}
	return lp
}

// result is the latency table and the CDFs, once the tasks have run.
func (lp *latencyParts) result() ([]schema.LatencyGroup, []schema.CDF) {
	out := []schema.LatencyGroup{lp.all}
	var cdfs []schema.CDF
	for k, g := range lp.groups {
		if g.Requests > 0 {
			out = append(out, g)
			cdfs = append(cdfs, lp.cdfs[k]...)
		}
	}
	return out, cdfs
}

// groupCDFs thins each metric's sorted values of group gi to the points a
// CDF plot needs (run after dists, which sorts them).
func (e *Engine) groupCDFs(gi uint32, a *latencyAcc) []schema.CDF {
	var cdfs []schema.CDF
	for m := range numMetrics {
		vals := a.vals[m]
		if m == mITL {
			vals = sortedUnion(e.gapsDefs[gi], e.gapsRest[gi])
		}
		if len(vals) > 0 {
			cdfs = append(cdfs, schema.CDF{Metric: metricIDs[m], Group: e.groups[gi], Requests: a.n, Sorted: thin(vals, cdfPoints)})
		}
	}
	return cdfs
}

func exactDist(vals []float64) schema.Dist {
	d := schema.Dist{Count: int64(len(vals)), Exact: true}
	if len(vals) == 0 {
		d.Mean, d.P50, d.P90, d.P99, d.P999, d.Max = schema.NaN(), schema.NaN(), schema.NaN(), schema.NaN(), schema.NaN(), schema.NaN()
		return d
	}
	d.Mean = schema.Num(npMean(vals))
	slices.Sort(vals)
	fill(&d, vals)
	return d
}
