// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"slices"
	"strings"
	"time"
	"unsafe"

	"github.com/llmslo/llmslo/internal/report/schema"
)

// recordSize is the bytes kept per request: the record, one uint16 verdict
// and one causeSet per SLO, and a stream record for requests with
// chunk timing.
const recordSize = int(unsafe.Sizeof(record{}))

func rfc3339(ns int64) string {
	return time.Unix(0, ns).UTC().Format(time.RFC3339Nano)
}

// build computes the report from the records, one section after the
// other (the files named after them).
func (e *Engine) build(inputs []string) *Report {
	r := &Report{
		Schema: schema.SchemaVersion, Inputs: inputs, Processor: e.opts.ProcessorID, GroupBy: e.opts.By,
		MaxGroups: e.opts.MaxGroups, OverflowRequests: e.overflowed,
		Spans: e.spans.Load(), Requests: int64(len(e.recs)), Failed: e.failed,
		Duration: schema.NaN(), SLOs: []schema.SLOReport{}, Attribution: []schema.Attribution{}, Sweep: []schema.SweepCurve{}, Timeline: []schema.Timeline{},
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
		r.Attribution = append(r.Attribution, e.attribution(i, order))
		r.Sweep = append(r.Sweep, e.sweep(i, order)...)
		r.Timeline = append(r.Timeline, e.timeline(i))
	}
	r.Latency, r.CDFs = e.latency(order)
	r.Definitions = e.definitions()
	r.Slowest = e.slowestLists()
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
