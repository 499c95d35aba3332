// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"container/heap"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Ramp makes the arrival rate change linearly from From to To requests
// per second over the run's Duration (Poisson arrivals of that rate), so a
// run can load an engine past what it holds.
type Ramp struct{ From, To float64 }

// ParseRamp parses "5:60": from 5 to 60 requests per second.
func ParseRamp(s string) (*Ramp, error) {
	a, b, ok := strings.Cut(s, ":")
	if !ok {
		return nil, fmt.Errorf("%q: want FROM:TO requests per second, such as 5:60", s)
	}
	from, err1 := strconv.ParseFloat(strings.TrimSpace(a), 64)
	to, err2 := strconv.ParseFloat(strings.TrimSpace(b), 64)
	if err1 != nil || err2 != nil || !(from > 0) || !(to > 0) || math.IsInf(from, 0) || math.IsInf(to, 0) {
		return nil, fmt.Errorf("%q: FROM and TO must be positive numbers of requests per second, such as 5:60", s)
	}
	return &Ramp{From: from, To: to}, nil
}

// at is the time (seconds) by which work arrivals are expected: the
// inverse of the ramp's cumulative rate from t + (to-from) t^2 / 2d, in
// the form that stays exact when the ramp is flat; +Inf past a falling
// ramp's total.
func (r *Ramp) at(work float64, d time.Duration) float64 {
	a, b := r.From, (r.To-r.From)/(2*d.Seconds())
	disc := a*a + 4*b*work
	if disc < 0 {
		return math.Inf(1)
	}
	return 2 * work / (a + math.Sqrt(disc))
}

// serves reports whether the shape writes an engine span: the requests a
// replica counts in flight.
func (s Shape) serves() bool { return s == ShapeVLLM || s == ShapeTRTLLM || s == ShapeJoined }

// serverEnd is when an engine span of req, arriving at arrival, ends: a
// little after the last token (vLLM's output processor), or 10 ms after
// leaving the queue for a failed request.
func serverEnd(req *Request, arrival time.Time) time.Time {
	if req.Failed {
		return arrival.Add(Durations(req.Queue + 0.01))
	}
	return arrival.Add(Durations(req.E2E() + 0.0002))
}

// inFlight counts each replica's engine spans in flight: the ends, in ns,
// of those that started, earliest first.
type inFlight map[string]*endHeap

// arrive adds a span from start to end (ns) on replica and returns the
// replica's spans in flight at start, itself included: every span with
// start' <= start < end'. Starts must come in order per replica.
func (f inFlight) arrive(replica string, start, end int64) int {
	h := f[replica]
	if h == nil {
		h = &endHeap{}
		f[replica] = h
	}
	for h.Len() > 0 && (*h)[0] <= start {
		heap.Pop(h)
	}
	heap.Push(h, end)
	return h.Len()
}

type endHeap []int64

func (h endHeap) Len() int           { return len(h) }
func (h endHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h endHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *endHeap) Push(x any)        { *h = append(*h, x.(int64)) }
func (h *endHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// ReplicaName names replica r of model: its engine spans'
// service.instance.id.
func ReplicaName(model string, r int) string { return fmt.Sprintf("%s-%d", model, r) }
