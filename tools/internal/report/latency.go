// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"math"
	"slices"

	"github.com/llmslo/llmslo/tools/internal/report/schema"
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
// failed requests count but give no values. A first pass counts them so
// that each slice is made once at its size: grown by appends, the slices
// of a large report were copied about four times over, on the one core
// that runs this step before the sections.
func (e *Engine) latencyValues() (all *latencyAcc, per []*latencyAcc) {
	all = &latencyAcc{}
	per = make([]*latencyAcc, len(e.groups))
	counts := make([][numMetrics]int, len(e.groups))
	for _, rec := range e.recs.all() {
		if per[rec.group] == nil {
			per[rec.group] = &latencyAcc{}
		}
		all.n++
		per[rec.group].n++
		for m, v := range rec.latencies() {
			if !math.IsNaN(v) {
				counts[rec.group][m]++
			}
		}
	}
	var total [numMetrics]int
	for g, c := range counts {
		for m, n := range c {
			if n > 0 {
				per[g].vals[m] = make([]float64, 0, n)
				total[m] += n
			}
		}
	}
	for m, n := range total {
		if n > 0 {
			all.vals[m] = make([]float64, 0, n)
		}
	}
	for _, rec := range e.recs.all() {
		g := per[rec.group]
		for m, v := range rec.latencies() {
			if !math.IsNaN(v) {
				all.vals[m] = append(all.vals[m], v)
				g.vals[m] = append(g.vals[m], v)
			}
		}
	}
	return all, per
}

// latencies are the request's values of each metric, NaN where it has
// none (ITL's distribution comes from the pooled gaps, and a failed
// request gives none).
func (r *record) latencies() [numMetrics]float64 {
	var l [numMetrics]float64
	for m := range l {
		l[m] = math.NaN()
	}
	if !r.failed {
		l[mTTFT], l[mTPOT], l[mE2E], l[mQueue] = r.ttft, r.tpot, r.e2e, r.queue
	}
	return l
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
			cdfs = append(cdfs, schema.CDF{Metric: metricIDs[m], Group: e.groups[gi], Requests: a.n, Sorted: thin(vals, cdfPoints),
				Values: int64(len(vals)), Zeros: zeros(vals)})
		}
	}
	return cdfs
}

// zeros counts the values at or below 0 at the start of sorted (NaN, which
// sorts first, is not one).
func zeros(sorted []float64) int64 {
	var n int64
	for _, v := range sorted {
		if v > 0 {
			break
		}
		if v <= 0 {
			n++
		}
	}
	return n
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
