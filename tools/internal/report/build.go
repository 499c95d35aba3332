// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/llmslo/llmslo/tools/internal/report/schema"
)

// recordSize is the bytes kept per request: the record, one uint16 verdict
// and one causeSet per SLO, and a stream record for requests with
// chunk timing.
const recordSize = int(unsafe.Sizeof(record{}))

func rfc3339(ns int64) string {
	return time.Unix(0, ns).UTC().Format(time.RFC3339Nano)
}

// build computes the report from the records. Its sections (the files
// named after them) read the records and each writes only its own part of
// the report, so they run at once on every core (e.cores()) and the report
// is the same on any number.
func (e *Engine) build(inputs []string) *Report {
	r := &Report{
		Schema: schema.SchemaVersion, Inputs: inputs, Processor: e.opts.ProcessorID, GroupBy: e.opts.By,
		MaxGroups: e.opts.MaxGroups, OverflowRequests: e.overflowed,
		Spans: e.spans.Load(), Requests: int64(e.recs.count()), Failed: e.failed,
		Duration: schema.NaN(), Sweep: []schema.SweepCurve{},
		CapacityBy: e.opts.CapacityBy, CapacityMinRequests: e.opts.CapacityMinRequests, CapacityUnplaced: e.replicas.unplaced,
	}
	if r.Inputs == nil {
		r.Inputs = []string{}
	}
	if e.recs.count() > 0 && e.minStart < e.maxEnd {
		r.Start, r.End = rfc3339(e.minStart), rfc3339(e.maxEnd)
		r.Duration = schema.Num(float64(e.maxEnd-e.minStart) / 1e9)
	}
	order := e.groupOrder()
	ns := len(e.slos)
	r.SLOs, r.Attribution, r.Timeline = make([]schema.SLOReport, ns), make([]schema.Attribution, ns), make([]schema.Timeline, ns)
	sweeps := make([][]schema.SweepCurve, ns)
	lat := e.latencySections(order)
	defs := e.definitionSections()
	tasks := append(lat.tasks, defs.tasks...) // the largest first
	tasks = append(tasks, func() { r.Slowest = e.slowestLists() }, func() { r.Capacity = e.capacity(order) })
	for i := range e.slos {
		tasks = append(tasks,
			func() { r.SLOs[i] = e.sloReport(i, order, float64(r.Duration)) },
			func() { r.Attribution[i] = e.attribution(i, order) },
			func() { sweeps[i] = e.sweep(i, order) },
			func() { r.Timeline[i] = e.timeline(i) })
	}
	runTasks(e.cores(), tasks)
	for _, s := range sweeps {
		r.Sweep = append(r.Sweep, s...)
	}
	r.Latency, r.CDFs = lat.result()
	r.Definitions = defs.result()
	return r
}

// runTasks runs every task on up to n goroutines, and returns when all
// have.
func runTasks(n int, tasks []func()) {
	if n <= 1 {
		for _, t := range tasks {
			t()
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(n, len(tasks)) {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(len(tasks)); i = next.Add(1) - 1 {
				tasks[i]()
			}
		})
	}
	wg.Wait()
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
