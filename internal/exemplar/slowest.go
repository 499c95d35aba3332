// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

// Package exemplar keeps, per data point and flush interval, the slowest
// observations with the trace and span they came from, so a dashboard can
// jump from a P99 spike to a request that caused it. An SRE wants the
// outliers, not the first N seen: a bounded min-heap on the value keeps the
// N largest in O(log N) per kept observation, and a value below the current
// N-th largest costs one comparison.
package exemplar

import (
	"slices"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// Exemplar is one observation and where it came from.
type Exemplar struct {
	Value   float64
	TraceID pcommon.TraceID
	SpanID  pcommon.SpanID
	Time    pcommon.Timestamp
}

// Slowest keeps the largest observations offered since the last Reset, at
// most its capacity. The zero value keeps none. Not safe for concurrent use:
// it lives inside a series, under the series' lock.
type Slowest struct {
	max  int
	heap []Exemplar // a min-heap on Value: heap[0] is the smallest kept
}

// NewSlowest returns a Slowest that keeps at most n exemplars.
func NewSlowest(n int) Slowest { return Slowest{max: n} }

// Offer considers one observation.
func (s *Slowest) Offer(e Exemplar) {
	switch {
	case s.max <= 0:
	case len(s.heap) < s.max:
		s.heap = append(s.heap, e)
		s.up(len(s.heap) - 1)
	case e.Value > s.heap[0].Value:
		s.heap[0] = e
		s.down(0)
	}
}

// Len is the number of exemplars kept.
func (s *Slowest) Len() int { return len(s.heap) }

// Reset forgets every exemplar, keeping the memory: each exemplar lives one
// export cycle, as in spanmetricsconnector.
func (s *Slowest) Reset() { s.heap = s.heap[:0] }

// AppendTo adds the kept exemplars to es, slowest first.
func (s *Slowest) AppendTo(es pmetric.ExemplarSlice) {
	kept := slices.Clone(s.heap)
	slices.SortFunc(kept, func(a, b Exemplar) int {
		switch {
		case a.Value > b.Value:
			return -1
		case a.Value < b.Value:
			return 1
		}
		return 0
	})
	es.EnsureCapacity(es.Len() + len(kept))
	for _, e := range kept {
		x := es.AppendEmpty()
		x.SetDoubleValue(e.Value)
		x.SetTraceID(e.TraceID)
		x.SetSpanID(e.SpanID)
		x.SetTimestamp(e.Time)
	}
}

func (s *Slowest) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if s.heap[parent].Value <= s.heap[i].Value {
			return
		}
		s.heap[parent], s.heap[i] = s.heap[i], s.heap[parent]
		i = parent
	}
}

func (s *Slowest) down(i int) {
	n := len(s.heap)
	for {
		smallest, l, r := i, 2*i+1, 2*i+2
		if l < n && s.heap[l].Value < s.heap[smallest].Value {
			smallest = l
		}
		if r < n && s.heap[r].Value < s.heap[smallest].Value {
			smallest = r
		}
		if smallest == i {
			return
		}
		s.heap[i], s.heap[smallest] = s.heap[smallest], s.heap[i]
		i = smallest
	}
}
