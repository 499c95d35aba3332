// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package assembly

import (
	"cmp"
	"container/list"
	"slices"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmslo/llmslo/internal/derive"
	"github.com/llmslo/llmslo/internal/preset"
)

type step struct {
	at      uint64
	counter int64 // -1: none
}

type traceEntry struct {
	id        pcommon.TraceID
	created   time.Time
	steps     []step
	truncated bool
	// maxCounter is the largest step counter seen (SGLang's decode_ct).
	maxCounter int64
	held       []heldSpan
	elem       *list.Element
	// server is the engine's view of the trace's request, for the client
	// span of the same request (joining).
	server *ServerView
}

type heldSpan struct {
	td       ptrace.Traces // one resource, one scope, the span
	deadline time.Time
	expected int64 // steps that complete the request, 0 when unknown
}

// ServerView is what an engine span knows of a request that its client span
// does not; Span hands it out for the client span of the same trace.
type ServerView struct {
	TTFT, QueueTime derive.Value
	// The engine's other parts of the request's TTFT, for the attribution
	// of the client span's misses.
	Prefill, KVTransfer derive.Value
}

// noteServer remembers an engine span's view for a client span of the same
// trace that arrives later.
func (a *Assembler) noteServer(id pcommon.TraceID, res *derive.Result) {
	if res.TTFT.S != derive.Known && res.QueueTime.S != derive.Known {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.entry(id).server = &ServerView{TTFT: res.TTFT, QueueTime: res.QueueTime, Prefill: res.PrefillTime, KVTransfer: res.KVTransferTime}
}

// serverViewOf returns the engine's view of the trace's request, if seen.
func (a *Assembler) serverViewOf(id pcommon.TraceID) *ServerView {
	a.mu.Lock()
	defer a.mu.Unlock()
	if e, ok := a.traces[id]; ok {
		return e.server
	}
	return nil
}

// recordSteps stores the step spans of a batch. It reports whether any
// held request became complete; takeReleased then returns it.
func (a *Assembler) recordSteps(td ptrace.Traces) bool {
	if len(a.steps) == 0 {
		return false
	}
	completed := false
	locked := false
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				span := spans.At(k)
				st, ok := a.steps[span.Name()]
				if !ok {
					continue
				}
				if !locked {
					a.mu.Lock()
					defer a.mu.Unlock()
					locked = true
				}
				e := a.entry(span.TraceID())
				a.addStep(e, readStep(span, st))
				if len(e.held) > 0 && e.complete() {
					completed = true
				}
			}
		}
	}
	return completed
}

// readStep reads a step span's output time and, if the preset names one,
// its token counter.
func readStep(span ptrace.Span, st *preset.Steps) step {
	s := step{at: uint64(span.EndTimestamp()), counter: -1}
	if st.Time == preset.StepStart {
		s.at = uint64(span.StartTimestamp())
	}
	if st.Counter != "" {
		if v, ok := span.Attributes().Get(st.Counter); ok && v.Type() == pcommon.ValueTypeInt && v.Int() >= 0 {
			s.counter = v.Int()
		}
	}
	return s
}

func (a *Assembler) entry(id pcommon.TraceID) *traceEntry {
	if e, ok := a.traces[id]; ok {
		return e
	}
	for len(a.traces) >= a.cfg.MaxTraces {
		a.evictOldest()
	}
	e := &traceEntry{id: id, created: a.now()}
	e.elem = a.byAge.PushBack(e)
	a.traces[id] = e
	return e
}

func (a *Assembler) addStep(e *traceEntry, s step) {
	if len(e.steps) >= a.cfg.MaxStepsPerTrace {
		if !e.truncated {
			a.tel.Evicted(EvictStepsPerTrace, 1)
		}
		e.truncated = true
		return
	}
	for a.totalSteps >= a.cfg.MaxSteps {
		// Evict the oldest trace other than e: evicting e itself would
		// leave the step being added on an entry no longer counted.
		oldest := a.byAge.Front()
		if oldest != nil && oldest.Value.(*traceEntry) == e {
			oldest = oldest.Next()
		}
		if oldest == nil {
			e.truncated = true
			return
		}
		a.evict(oldest.Value.(*traceEntry))
	}
	e.steps = append(e.steps, s)
	e.maxCounter = max(e.maxCounter, s.counter)
	a.totalSteps++
}

// evictOldest drops the oldest trace. Caller holds mu.
func (a *Assembler) evictOldest() { a.evict(a.byAge.Front().Value.(*traceEntry)) }

// evict drops trace e. Its held request spans are released with the steps
// seen so far, marked as evicted. Caller holds mu.
func (a *Assembler) evict(e *traceEntry) {
	a.remove(e)
	a.tel.Evicted(EvictTraces, 1)
	a.releaseInto(a.released, e, true)
}

// remove takes e out of the map, the age list and the step count; its held
// spans leave the count when releaseInto releases them.
func (a *Assembler) remove(e *traceEntry) {
	a.byAge.Remove(e.elem)
	delete(a.traces, e.id)
	a.totalSteps -= len(e.steps)
}

// covers reports whether the steps seen complete a request expecting
// `expected` of them (0: any one will do). A step counter that has reached
// the expectation also completes it: with speculative decoding one step
// carries several tokens, so there are fewer steps than tokens.
func (e *traceEntry) covers(expected int64) bool {
	if len(e.steps) == 0 {
		return false
	}
	if expected <= 0 || int64(len(e.steps)) >= expected {
		return true
	}
	return e.maxCounter >= expected
}

// complete reports whether the entry has the steps its held requests expect.
func (e *traceEntry) complete() bool {
	for _, h := range e.held {
		if !e.covers(h.expected) {
			return false
		}
	}
	return true
}

// stepsToWaitFor says whether a request waits for step spans and how many
// complete it: one per output token after the first when the producer gives
// a count and its first token is not a step (SGLang's decode steps), else
// unknown (0: any step will do). A one-token output has no decode steps to
// wait for.
func stepsToWaitFor(p *preset.Preset, outputTokens int64, hasOutputTokens bool) (expected int64, wait bool) {
	if p.Steps.FirstTokenFromSteps || !hasOutputTokens {
		return 0, true
	}
	return outputTokens - 1, outputTokens > 1
}

// Steps is the derivation's hook (derive.StepSource): the steps recorded
// for the span's trace when they complete the request, taken out of the
// assembly; nil when the request waits for more, or waits for none.
func (a *Assembler) Steps(span ptrace.Span, p *preset.Preset, outputTokens int64, hasOutputTokens bool) *derive.Steps {
	expected, wait := stepsToWaitFor(p, outputTokens, hasOutputTokens)
	if !wait {
		return nil
	}
	steps, _ := a.takeSteps(span.TraceID(), expected)
	return steps
}

// takeSteps returns the steps recorded for the trace if they complete a
// request expecting `expected` steps (0: any); the entry is then removed.
func (a *Assembler) takeSteps(id pcommon.TraceID, expected int64) (*derive.Steps, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	e, ok := a.traces[id]
	if !ok || !e.covers(expected) {
		return nil, false
	}
	if e.server != nil {
		// Keep the engine's view for the trace's client span.
		a.remove(e)
		ne := a.entry(id)
		ne.server = e.server
	} else {
		a.remove(e)
	}
	// Requests of the same trace held earlier go with these steps too.
	a.releaseInto(a.released, e, false)
	return e.toSteps(), true
}

// toSteps sorts the steps by time and turns counters into per-step token
// counts: the difference from the previous step's counter.
func (e *traceEntry) toSteps() *derive.Steps {
	steps := e.steps
	sortSteps(steps)
	out := &derive.Steps{Times: make([]uint64, len(steps)), Counts: make([]int64, len(steps))}
	for i, s := range steps {
		out.Times[i] = s.at
		out.Counts[i] = -1
		if i > 0 && s.counter >= 0 && steps[i-1].counter >= 0 && s.counter > steps[i-1].counter {
			out.Counts[i] = s.counter - steps[i-1].counter
		}
	}
	return out
}

func sortSteps(s []step) {
	byTime := func(a, b step) int { return cmp.Compare(a.at, b.at) }
	if !slices.IsSortedFunc(s, byTime) {
		slices.SortStableFunc(s, byTime)
	}
}
