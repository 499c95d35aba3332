// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"container/heap"
	"encoding/hex"
	"math"
	"slices"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmslo/llmslo/tools/internal/report/schema"
)

// The slowest requests per metric, kept while reading in a heap of Top
// per metric.

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
	// parts are a slow miss's (attribution.go); unused per metric.
	parts parts
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

func (t *topK) add(v float64, span ptrace.Span, rec int) { t.addParts(v, span, rec, nil) }

// addParts is add keeping p with the entry.
func (t *topK) addParts(v float64, span ptrace.Span, rec int, p *parts) {
	if math.IsNaN(v) || t.k == 0 || len(t.h) == t.k && v <= t.h[0].v {
		return
	}
	e := slowEntry{v: v, trace: span.TraceID(), span: span.SpanID(), record: rec}
	if p != nil {
		e.parts = *p
	}
	if len(t.h) < t.k {
		heap.Push(&t.h, e)
		return
	}
	t.h[0] = e
	heap.Fix(&t.h, 0)
}

// sorted are the entries, largest first.
func (t *topK) sorted() []slowEntry {
	h := slices.Clone(t.h)
	slices.SortFunc(h, func(a, b slowEntry) int { return cmpFloat(b.v, a.v) })
	return h
}

// slowestLists are the slowest requests per metric, slowest first.
func (e *Engine) slowestLists() map[string][]schema.Slow {
	out := map[string][]schema.Slow{}
	for m := range numMetrics {
		list := []schema.Slow{}
		for _, s := range e.slowest[m].sorted() {
			rec := e.recs.at(s.record)
			list = append(list, schema.Slow{TraceID: hex.EncodeToString(s.trace[:]), SpanID: hex.EncodeToString(s.span[:]),
				Value: schema.Num(s.v), Group: e.groups[rec.group], Start: rfc3339(rec.start)})
		}
		out[metricIDs[m]] = list
	}
	return out
}
