// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"container/heap"
	"encoding/hex"
	"math"
	"slices"
	"strings"
	"time"
	"unsafe"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmslo/llmslo/internal/contract"
	"github.com/llmslo/llmslo/internal/report/schema"
	"github.com/llmslo/llmslo/internal/slo"
)

// recordSize is the bytes kept per request: the record, one uint16 verdict
// per SLO, and a stream record for requests with chunk timing.
const recordSize = int(unsafe.Sizeof(record{}))

// topK keeps the k largest values of one metric with their span IDs.
type topK struct {
	k int
	h slowHeap
}

type slowEntry struct {
	v      float64
	trace  [16]byte
	span   [8]byte
	record int
}

type slowHeap []slowEntry

func (h slowHeap) Len() int           { return len(h) }
func (h slowHeap) Less(i, j int) bool { return h[i].v < h[j].v }
func (h slowHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *slowHeap) Push(x any)        { *h = append(*h, x.(slowEntry)) }
func (h *slowHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func (t *topK) add(v float64, span ptrace.Span, rec int) {
	if math.IsNaN(v) || t.k == 0 || len(t.h) == t.k && v <= t.h[0].v {
		return
	}
	e := slowEntry{v: v, trace: span.TraceID(), span: span.SpanID(), record: rec}
	if len(t.h) < t.k {
		heap.Push(&t.h, e)
		return
	}
	t.h[0] = e
	heap.Fix(&t.h, 0)
}

func rfc3339(ns int64) string {
	return time.Unix(0, ns).UTC().Format(time.RFC3339Nano)
}

func (e *Engine) build(inputs []string) *Report {
	r := &Report{
		Schema: schema.SchemaVersion, Inputs: inputs, Processor: e.opts.ProcessorID, GroupBy: e.opts.By,
		MaxGroups: e.opts.MaxGroups, OverflowRequests: e.overflowed,
		Spans: e.spans.Load(), Requests: int64(len(e.recs)), Failed: e.failed,
		Duration: schema.NaN(), Slowest: map[string][]schema.Slow{}, SLOs: []schema.SLOReport{}, Sweep: []schema.SweepCurve{}, Timeline: []schema.Timeline{},
	}
	if r.Inputs == nil {
		r.Inputs = []string{}
	}
	if len(e.recs) > 0 && e.minStart < e.maxEnd {
		r.Start, r.End = rfc3339(e.minStart), rfc3339(e.maxEnd)
		r.Duration = schema.Num(float64(e.maxEnd-e.minStart) / 1e9)
	}
	order := e.groupOrder()
	for i := range e.slos {
		r.SLOs = append(r.SLOs, e.sloReport(i, order, float64(r.Duration)))
		r.Sweep = append(r.Sweep, e.sweep(i, order)...)
		r.Timeline = append(r.Timeline, e.timeline(i))
	}
	r.Latency, r.CDFs = e.latency(order)
	r.Definitions = e.definitions()
	for m := range numMetrics {
		list := []schema.Slow{}
		h := slices.Clone(e.slowest[m].h)
		slices.SortFunc(h, func(a, b slowEntry) int { return cmpFloat(b.v, a.v) })
		for _, s := range h {
			rec := &e.recs[s.record]
			list = append(list, schema.Slow{TraceID: hex.EncodeToString(s.trace[:]), SpanID: hex.EncodeToString(s.span[:]),
				Value: schema.Num(s.v), Group: e.groups[rec.group], Start: rfc3339(rec.start)})
		}
		r.Slowest[metricIDs[m]] = list
	}
	return r
}

// groupOrder sorts the groups by their dimension values.
func (e *Engine) groupOrder() []uint32 {
	ids := make([]uint32, len(e.groups))
	for i := range ids {
		ids[i] = uint32(i)
	}
	key := func(g schema.Group) string {
		var b strings.Builder
		for _, d := range e.opts.By {
			b.WriteString(g[d])
			b.WriteByte(0)
		}
		return b.String()
	}
	// The overflow group comes last.
	slices.SortFunc(ids, func(a, b uint32) int {
		ga, gb := e.groups[a], e.groups[b]
		if c := cmpBool(ga.IsOverflow(), gb.IsOverflow()); c != 0 {
			return c
		}
		return strings.Compare(key(ga), key(gb))
	})
	return ids
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

type sloAcc struct {
	requests, met, violated, unknown int64
	tokens, tokensMet                int64
	violations                       map[string]int64
	combos                           map[uint16]int64
	attain                           [5]int64
	// attainOf[c] is the denominator of attain[c] under exclude: the
	// requests still decidable with constraint c dropped.
	attainOf [5]int64
}

func (e *Engine) sloReport(i int, order []uint32, dur float64) schema.SLOReport {
	def := e.slos[i]
	rep := schema.SLOReport{Name: def.name, Constraints: map[string]float64{}, UnknownVerdicts: string(slo.UnknownBad), Denominator: schema.DenominatorRequests}
	if def.excludeUnknown {
		rep.UnknownVerdicts, rep.Denominator = string(slo.UnknownExclude), schema.DenominatorDecidable
	}
	for c, l := range def.limits {
		if l.Set {
			rep.Constraints[constraintNames[c]] = l.Seconds
		}
	}
	all := &sloAcc{violations: map[string]int64{}, combos: map[uint16]int64{}}
	per := make([]*sloAcc, len(e.groups))
	ns := len(e.slos)
	for k := range e.recs {
		v := e.verdicts[k*ns+i]
		if v&vSelected == 0 {
			continue
		}
		rec := &e.recs[k]
		g := per[rec.group]
		if g == nil {
			g = &sloAcc{violations: map[string]int64{}, combos: map[uint16]int64{}}
			per[rec.group] = g
		}
		all.add(v, rec, def)
		g.add(v, rec, def)
	}
	rep.Groups = append(rep.Groups, all.group(schema.Group{}, def, dur))
	for _, gi := range order {
		if per[gi] != nil {
			rep.Groups = append(rep.Groups, per[gi].group(e.groups[gi], def, dur))
		}
	}
	return rep
}

func (a *sloAcc) add(v uint16, rec *record, def sloDef) {
	a.requests++
	tokens := int64(max(rec.outTokens, 0))
	a.tokens += tokens
	fail := v >> vFailShift & vConstrMask
	unk := v >> vUnkShift & vConstrMask
	failed := v&vError != 0
	switch {
	case !failed && fail == 0 && unk == 0:
		a.met++
		a.tokensMet += tokens
	case failed || fail != 0:
		a.violated++
	default:
		a.unknown++
	}
	if failed {
		a.violations[contract.ViolationError]++
	}
	for c := range constraintNames {
		if fail&(1<<c) != 0 {
			a.violations[constraintNames[c]]++
		}
		if unk&(1<<c) != 0 {
			a.violations[constraintNames[c]+contract.UnknownSuffix]++
		}
	}
	if failed || fail != 0 {
		key := fail
		if failed {
			key |= 1 << constraintBits
		}
		a.combos[key]++
	}
	// Attainable: met with constraint c dropped; decided then unless
	// another constraint is still unknown and nothing fails.
	for c, l := range def.limits {
		if !l.Set {
			continue
		}
		if failed || fail&^(1<<c) != 0 || unk&^(1<<c) == 0 {
			a.attainOf[c]++
		}
		if !failed && fail&^(1<<c) == 0 && unk&^(1<<c) == 0 {
			a.attain[c]++
		}
	}
}

func ratio(k, n int64) schema.Num {
	if n == 0 {
		return schema.NaN()
	}
	return schema.Num(float64(k) / float64(n))
}

func perSecond(k int64, dur float64) schema.Num {
	if !(dur > 0) {
		return schema.NaN()
	}
	return schema.Num(float64(k) / dur)
}

func (a *sloAcc) group(g schema.Group, def sloDef, dur float64) schema.SLOGroup {
	denom := a.requests
	if def.excludeUnknown {
		denom = a.met + a.violated
	}
	lo, hi := wilson(int(a.met), int(denom))
	out := schema.SLOGroup{
		Group: g, Requests: a.requests, Met: a.met, Violated: a.violated, Unknown: a.unknown,
		Goodput: ratio(a.met, denom), GoodputCI95: [2]schema.Num{schema.Num(lo), schema.Num(hi)},
		GoodPerSecond: perSecond(a.met, dur), OutputTokens: a.tokens, OutputTokensMet: a.tokensMet,
		TokenGoodput: ratio(a.tokensMet, a.tokens), GoodTokensPerSecond: perSecond(a.tokensMet, dur),
		Violations: a.violations, Attainable: map[string]schema.Num{}, Combinations: []schema.Combination{},
	}
	for key, n := range a.combos {
		var cs []string
		if key&(1<<constraintBits) != 0 {
			cs = append(cs, contract.ViolationError)
		}
		for c := range constraintNames {
			if key&(1<<c) != 0 {
				cs = append(cs, constraintNames[c])
			}
		}
		out.Combinations = append(out.Combinations, schema.Combination{Constraints: cs, Requests: n})
	}
	slices.SortFunc(out.Combinations, func(x, y schema.Combination) int {
		if x.Requests != y.Requests {
			return int(y.Requests - x.Requests)
		}
		return slices.Compare(x.Constraints, y.Constraints)
	})
	for c, l := range def.limits {
		if l.Set {
			n := a.requests
			if def.excludeUnknown {
				n = a.attainOf[c]
			}
			out.Attainable[constraintNames[c]] = ratio(a.attain[c], n)
		}
	}
	return out
}

// sweep re-judges SLO i with every threshold scaled: a known value fails
// when it exceeds scale x threshold; failed requests stay violated and
// undecidable constraints stay unknown. At 1x it reproduces the
// processor's verdicts. Under exclude, a point's goodput is over the
// requests decided at its scale (an unknown request is decided once a known
// value fails).
func (e *Engine) sweep(i int, order []uint32) []schema.SweepCurve {
	def := e.slos[i]
	scales := schema.SweepScales()
	ns := len(e.slos)
	newAcc := func() *sweepAcc {
		return &sweepAcc{met: make([]int64, len(scales)), decided: make([]int64, len(scales))}
	}
	all := newAcc()
	per := make([]*sweepAcc, len(e.groups))
	for k := range e.recs {
		v := e.verdicts[k*ns+i]
		if v&vSelected == 0 {
			continue
		}
		rec := &e.recs[k]
		if per[rec.group] == nil {
			per[rec.group] = newAcc()
		}
		for _, a := range []*sweepAcc{all, per[rec.group]} {
			a.add(v, rec, def, scales)
		}
	}
	curve := func(g schema.Group, a *sweepAcc) schema.SweepCurve {
		c := schema.SweepCurve{SLO: def.name, Group: g}
		for si, s := range scales {
			n := a.n
			if def.excludeUnknown {
				n = a.decided[si]
			}
			c.Points = append(c.Points, schema.SweepPoint{Scale: s, Met: a.met[si], Goodput: ratio(a.met[si], n)})
		}
		return c
	}
	out := []schema.SweepCurve{curve(schema.Group{}, all)}
	for _, gi := range order {
		if per[gi] != nil {
			out = append(out, curve(e.groups[gi], per[gi]))
		}
	}
	return out
}

// sweepAcc counts one group's requests, and per scale those met and those
// decided.
type sweepAcc struct {
	n            int64
	met, decided []int64
}

func (a *sweepAcc) add(v uint16, rec *record, def sloDef, scales []float64) {
	a.n++
	failed, unknown := v&vError != 0, v>>vUnkShift&vConstrMask != 0
	vals := [5]float64{rec.ttft, rec.tpot, rec.itlMax, rec.e2e, rec.queue}
	for si, s := range scales {
		ok := true
		for c, l := range def.limits {
			if l.Set && !math.IsNaN(vals[c]) && vals[c] > l.Seconds*s {
				ok = false
				break
			}
		}
		if failed || !ok || !unknown {
			a.decided[si]++
		}
		if ok && !failed && !unknown {
			a.met[si]++
		}
	}
}

// timeline counts SLO i's verdicts in at most 60 buckets of request start.
func (e *Engine) timeline(i int) schema.Timeline {
	t := schema.Timeline{SLO: e.slos[i].name, Buckets: []schema.TimelineBucket{}}
	if len(e.recs) == 0 || e.maxEnd <= e.minStart {
		return t
	}
	span := e.maxEnd - e.minStart
	step := niceStep(span / 60)
	t.Step = float64(step) / 1e9
	nb := int(span/step) + 1
	t.Buckets = make([]schema.TimelineBucket, nb)
	ns := len(e.slos)
	for k := range e.recs {
		v := e.verdicts[k*ns+i]
		if v&vSelected == 0 {
			continue
		}
		b := &t.Buckets[min(nb-1, max(0, int((e.recs[k].start-e.minStart)/step)))]
		switch {
		case v&vError != 0 || v>>vFailShift&vConstrMask != 0:
			b.Violated++
		case v>>vUnkShift&vConstrMask != 0:
			b.Unknown++
		default:
			b.Met++
		}
	}
	return t
}

// niceStep rounds a bucket width up to 1, 2 or 5 times a power of ten of
// milliseconds (at least 1 ms).
func niceStep(ns int64) int64 {
	step := int64(time.Millisecond)
	for {
		for _, m := range []int64{1, 2, 5} {
			if step*m >= ns {
				return step * m
			}
		}
		step *= 10
	}
}

// latency computes the exact distributions, overall and per group, over
// successful requests.
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

func (e *Engine) latency(order []uint32) ([]schema.LatencyGroup, []schema.CDF) {
	all, per := e.latencyValues()
	var allPools []*pool
	allPools = append(allPools, e.gapsDefs...)
	allPools = append(allPools, e.gapsRest...)
	out := []schema.LatencyGroup{{Group: schema.Group{}, Requests: all.n, Metrics: all.dists(summarize(allPools...))}}
	var cdfs []schema.CDF
	for _, gi := range order {
		if per[gi] == nil {
			continue
		}
		out = append(out, schema.LatencyGroup{Group: e.groups[gi], Requests: per[gi].n,
			Metrics: per[gi].dists(summarize(e.gapsDefs[gi], e.gapsRest[gi]))})
		cdfs = append(cdfs, e.groupCDFs(gi, per[gi])...)
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
			u := &pool{vals: append(slices.Clone(e.gapsDefs[gi].vals), e.gapsRest[gi].vals...)}
			vals = u.sortedValues(cdfPoints)
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
