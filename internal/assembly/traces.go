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

// step is one step span: its output time, its counter (SGLang's
// decode_ct; -1: none) and the tokens it carries (TGI's generation; 1 when
// it does not say). 16 bytes: max_steps is documented in them.
type step struct {
	at      uint64
	counter int32
	tokens  int32
}

// maxCounter bounds a step's counter and token counts, as derive bounds a
// request's tokens.
const maxCounter = derive.MaxTokens

type traceEntry struct {
	id      pcommon.TraceID
	created time.Time
	// kind is how the trace's steps read (the first step's preset); steps
	// of another kind in the same trace are not recorded.
	kind      *preset.Steps
	steps     []step
	truncated bool
	// total is the request's token count a last step stated (TGI), -1
	// when none did, conflicting when two said different counts.
	total int64
	// memo caches progress for len(steps) steps and a wanted count: the
	// completion check runs for every batch that brings a step.
	memo    progressMemo
	touched bool
	held    []heldSpan
	elem    *list.Element
	// server is the engine's view of the trace's request, for the client
	// span of the same request (joining).
	server *ServerView
}

// conflicting is traceEntry.total when two last steps disagree.
const conflicting = -2

type progressMemo struct {
	n          int
	want, seen int64
	beyond     bool
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
// held request became complete; takeReleased then returns it. Completion
// is checked once per trace and batch, after all its steps are stored.
func (a *Assembler) recordSteps(td ptrace.Traces) bool {
	if len(a.steps) == 0 {
		return false
	}
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
				a.addStep(a.entry(span.TraceID()), st, span)
			}
		}
	}
	if !locked {
		// No step in this batch: it touched no entry, and a.touched is
		// another batch's, under the lock this one does not hold.
		return false
	}
	completed := false
	for _, e := range a.touched {
		e.touched = false
		// An entry evicted meanwhile is out of the map: its held spans
		// were released with it.
		if len(e.held) > 0 && a.traces[e.id] == e && e.complete() {
			completed = true
		}
	}
	clear(a.touched)
	a.touched = a.touched[:0]
	return completed
}

// readStep reads a step span's output time and, as the preset says, its
// token counter or the tokens it carries and the request's total; total is
// -1 when the step states none.
func readStep(span ptrace.Span, st *preset.Steps) (s step, total int64) {
	s, total = step{at: uint64(span.EndTimestamp()), counter: -1, tokens: 1}, -1
	if st.Time == preset.StepStart {
		s.at = uint64(span.StartTimestamp())
	}
	if st.Counter != "" {
		if v, ok := span.Attributes().Get(st.Counter); ok && v.Type() == pcommon.ValueTypeInt && v.Int() >= 0 && v.Int() <= maxCounter {
			s.counter = int32(v.Int())
		}
	}
	if st.Generation != "" {
		if v, ok := span.Attributes().Get(st.Generation); ok && v.Type() == pcommon.ValueTypeStr {
			tokens, t := readGeneration(v.Str())
			s.tokens, total = int32(min(tokens, maxCounter)), t
		}
	}
	return s, total
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

func (a *Assembler) addStep(e *traceEntry, st *preset.Steps, span ptrace.Span) {
	if e.kind == nil {
		e.kind, e.total = st, -1
	} else if e.kind != st {
		return
	}
	if !e.touched {
		e.touched = true
		a.touched = append(a.touched, e)
	}
	s, total := readStep(span, st)
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
	switch {
	case total < 0:
	case e.total == -1:
		e.total = total
	case e.total != total:
		e.total = conflicting
	}
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

// Progress is how far a held request's steps got: Seen of the Expected
// steps (for a producer whose steps state their tokens, TGI, tokens)
// recorded; Expected is 0 when nothing says how many there are.
type Progress struct {
	Seen, Expected int64
	// Complete: every step the request needs is there, none dropped.
	Complete bool
	// Evicted: steps or the trace were dropped to stay within the bounds.
	Evicted bool
}

// progress is the request's Progress when it expects `expected` steps (0:
// unknown). Completion needs every step, never the largest counter: with a
// counter (SGLang's decode_ct) each of 1..expected, else as many distinct
// steps, or for TGI steps whose tokens add up to the count its last step
// states. Steps sent twice count once.
func (e *traceEntry) progress(expected int64) Progress {
	want := expected
	if e.kind != nil && e.kind.Generation != "" && e.total != -1 {
		want = e.total
	}
	if e.memo.n != len(e.steps) || e.memo.want != want {
		seen, beyond := e.seen(want)
		e.memo = progressMemo{n: len(e.steps), want: want, seen: seen, beyond: beyond}
	}
	p := Progress{Seen: e.memo.seen, Expected: max(want, 0), Evicted: e.truncated}
	p.Complete = want > 0 && p.Seen == want && !e.memo.beyond && !e.truncated
	return p
}

// seen counts the distinct steps (or tokens) toward want (<= 0: unknown);
// beyond: a counter lies beyond want.
func (e *traceEntry) seen(want int64) (n int64, beyond bool) {
	steps := e.steps
	if e.kind != nil && e.kind.Counter != "" && !slices.ContainsFunc(steps, func(s step) bool { return s.counter < 0 }) {
		sortStepsBy(steps, byCounter)
		for i, s := range steps {
			switch {
			case want > 0 && int64(s.counter) > want:
				// A step beyond the request's count: the evidence
				// contradicts itself, and never completes.
				beyond = true
			case s.counter >= 1 && (i == 0 || s.counter != steps[i-1].counter):
				n++
			}
		}
		return n, beyond
	}
	sortStepsBy(steps, byTime)
	for i, s := range steps {
		if i == 0 || s.at != steps[i-1].at {
			n += int64(s.tokens)
		}
	}
	return n, false
}

// complete reports whether the entry has the steps its held requests expect.
func (e *traceEntry) complete() bool {
	for _, h := range e.held {
		if !e.progress(h.expected).Complete {
			return false
		}
	}
	return true
}

// stepsToWaitFor says whether a request waits for step spans and how many
// complete it (0: a step will say). When the first token is a step (TGI's
// prefill step) every token is: the request's token count, else its last
// step's. Otherwise (SGLang's decode steps) one step per output token after
// the first; a one-token output has no decode steps to wait for, and a
// request without a count cannot tell when its steps are complete.
func stepsToWaitFor(p *preset.Preset, outputTokens int64, hasOutputTokens bool) (expected int64, wait bool) {
	switch {
	case !hasOutputTokens:
		return 0, true
	case p.Steps.FirstTokenFromSteps:
		return outputTokens, outputTokens > 0
	default:
		return outputTokens - 1, outputTokens > 1
	}
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
	if !ok || !e.progress(expected).Complete {
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
// counts: the difference from the previous step's counter, or the tokens a
// step states.
func (e *traceEntry) toSteps() *derive.Steps {
	steps := e.steps
	sortStepsBy(steps, byTime)
	out := &derive.Steps{Times: make([]uint64, len(steps)), Counts: make([]int64, len(steps))}
	for i, s := range steps {
		out.Times[i] = s.at
		out.Counts[i] = -1
		switch {
		case s.counter < 0:
			if s.tokens != 1 {
				out.Counts[i] = int64(s.tokens)
			}
		case i > 0 && steps[i-1].counter >= 0 && s.counter > steps[i-1].counter:
			out.Counts[i] = int64(s.counter - steps[i-1].counter)
		}
	}
	return out
}

func byTime(a, b step) int { return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.counter, b.counter)) }

func byCounter(a, b step) int {
	return cmp.Or(cmp.Compare(a.counter, b.counter), cmp.Compare(a.at, b.at))
}

// sortStepsBy sorts s unless it is sorted already (the usual case: steps
// arrive in order, and counters rise with time).
func sortStepsBy(s []step, order func(a, b step) int) {
	if !slices.IsSortedFunc(s, order) {
		slices.SortFunc(s, order)
	}
}
