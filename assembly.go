// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloprocessor

import (
	"cmp"
	"container/list"
	"context"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/llmslo/llmslo/internal/derive"
	"github.com/llmslo/llmslo/internal/preset"
)

// assembler joins the step spans of a trace (SGLang decode_loop, TGI
// send_generation) to its request span. It is the processor's only state,
// and exists only when trace_assembly is enabled.
//
// Flow: step spans pass through at once; their output times are recorded
// per trace. A request span whose steps are all there (as many as its
// output count implies, or any at all when the producer gives no count) is
// derived at once. Otherwise it is taken out of its batch and held until its
// steps complete or Wait passes, then emitted downstream: appended to a
// later batch when its last steps arrive, or on its own at the deadline.
// Memory is bounded by MaxTraces, MaxSteps and MaxHeld (per trace and in
// total); what is evicted is counted and the affected request is marked in
// llm.metrics.error. Released spans that the next consumer refuses with a
// retryable error are kept (within MaxHeld) and sent again on the next tick.
type assembler struct {
	cfg    TraceAssemblyConfig
	steps  map[string]*preset.Steps // step span name -> how to read it
	next   consumer.Traces
	logger *zap.Logger
	now    func() time.Time
	// release derives and writes a held span (the processor's write path).
	release func(span ptrace.Span, resource pcommon.Map, scope derive.Scope, steps *derive.Steps, evicted bool)
	tel     *telemetry

	mu     sync.Mutex
	traces map[pcommon.TraceID]*traceEntry
	// released holds request spans let go and not yet delivered: by an
	// eviction, by a request of the same trace taking the steps, or refused
	// by the next consumer. The next batch or tick sends them.
	released   ptrace.Traces
	byAge      list.List // of *traceEntry, oldest first
	totalSteps int
	// totalHeld counts the held request spans of every entry.
	totalHeld int

	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
}

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
	server *serverView
}

// serverView is what an engine span knows that a client span does not.
type serverView struct {
	ttft, queueTime derive.Value
}

// noteServer remembers an engine span's view for a client span of the same
// trace that arrives later.
func (a *assembler) noteServer(id pcommon.TraceID, res *derive.Result) {
	if res.TTFT.S != derive.Known && res.QueueTime.S != derive.Known {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.entry(id).server = &serverView{ttft: res.TTFT, queueTime: res.QueueTime}
}

// serverViewOf returns the engine's view of the trace's request, if seen.
func (a *assembler) serverViewOf(id pcommon.TraceID) *serverView {
	a.mu.Lock()
	defer a.mu.Unlock()
	if e, ok := a.traces[id]; ok {
		return e.server
	}
	return nil
}

type heldSpan struct {
	td       ptrace.Traces // one resource, one scope, the span
	deadline time.Time
	expected int64 // steps that complete the request, 0 when unknown
}

func newAssembler(cfg TraceAssemblyConfig, presets []*preset.Preset, next consumer.Traces, logger *zap.Logger, tel *telemetry) *assembler {
	a := &assembler{cfg: cfg, steps: map[string]*preset.Steps{}, next: next, logger: logger, now: time.Now, tel: tel,
		traces: map[pcommon.TraceID]*traceEntry{}, released: ptrace.NewTraces()}
	for _, p := range presets {
		if p.Steps != nil {
			a.steps[p.Steps.SpanName] = p.Steps
		}
	}
	return a
}

func (a *assembler) start() {
	a.stop, a.done = make(chan struct{}), make(chan struct{})
	tick := max(a.cfg.Wait/4, 10*time.Millisecond)
	go func() {
		defer close(a.done)
		t := time.NewTicker(tick)
		defer t.Stop()
		for {
			select {
			case <-a.stop:
				return
			case <-t.C:
				_ = a.emit(context.Background(), a.expire(a.now(), false))
			}
		}
	}()
}

// shutdown stops the ticker and emits every held span. It is safe to call
// more than once and without start, as the component contract requires.
func (a *assembler) shutdown(ctx context.Context) error {
	a.stopOnce.Do(func() {
		if a.stop != nil {
			close(a.stop)
		}
	})
	if a.done != nil {
		select {
		case <-a.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return a.emit(ctx, a.expire(time.Time{}, true))
}

// recordSteps stores the step spans of a batch. It reports whether any
// held request became complete; takeReleased then returns it.
func (a *assembler) recordSteps(td ptrace.Traces) bool {
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
				s := step{at: uint64(span.EndTimestamp()), counter: -1}
				if st.Time == preset.StepStart {
					s.at = uint64(span.StartTimestamp())
				}
				if st.Counter != "" {
					if v, ok := span.Attributes().Get(st.Counter); ok && v.Type() == pcommon.ValueTypeInt && v.Int() >= 0 {
						s.counter = v.Int()
					}
				}
				e := a.entry(span.TraceID())
				a.addStep(e, s)
				if len(e.held) > 0 && e.complete() {
					completed = true
				}
			}
		}
	}
	return completed
}

func (a *assembler) entry(id pcommon.TraceID) *traceEntry {
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

func (a *assembler) addStep(e *traceEntry, s step) {
	if len(e.steps) >= a.cfg.MaxStepsPerTrace {
		if !e.truncated {
			a.tel.evictions.Add(context.Background(), 1, a.tel.evictionAttrs[evictStepsPerTrace])
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
func (a *assembler) evictOldest() { a.evict(a.byAge.Front().Value.(*traceEntry)) }

// evict drops trace e. Its held request spans are released with the steps
// seen so far, marked as evicted. Caller holds mu.
func (a *assembler) evict(e *traceEntry) {
	a.remove(e)
	a.tel.evictions.Add(context.Background(), 1, a.tel.evictionAttrs[evictTraces])
	a.releaseInto(a.released, e, true)
}

// remove takes e out of the map, the age list and the step count; its held
// spans leave the count when releaseInto releases them.
func (a *assembler) remove(e *traceEntry) {
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
func (a *assembler) Steps(span ptrace.Span, p *preset.Preset, outputTokens int64, hasOutputTokens bool) *derive.Steps {
	expected, wait := stepsToWaitFor(p, outputTokens, hasOutputTokens)
	if !wait {
		return nil
	}
	steps, _ := a.takeSteps(span.TraceID(), expected)
	return steps
}

// takeSteps returns the steps recorded for the trace if they complete a
// request expecting `expected` steps (0: any); the entry is then removed.
func (a *assembler) takeSteps(id pcommon.TraceID, expected int64) (*derive.Steps, bool) {
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

// hold keeps a copy of span, with its resource and scope and their
// schema_url (the convention version is read again on release), until its
// steps arrive or the wait passes. It reports false, keeping nothing, when
// the trace or the assembler already holds as many request spans as its
// bounds allow.
func (a *assembler) hold(span ptrace.Span, srcRS ptrace.ResourceSpans, srcSS ptrace.ScopeSpans, expected int64) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	e, ok := a.traces[span.TraceID()]
	switch {
	case a.totalHeld >= a.cfg.MaxHeld:
		a.tel.evictions.Add(context.Background(), 1, a.tel.evictionAttrs[evictHeld])
		return false
	case ok && len(e.held) >= a.cfg.MaxHeldPerTrace:
		a.tel.evictions.Add(context.Background(), 1, a.tel.evictionAttrs[evictHeldPerTrace])
		return false
	}
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	srcRS.Resource().CopyTo(rs.Resource())
	rs.SetSchemaUrl(srcRS.SchemaUrl())
	ss := rs.ScopeSpans().AppendEmpty()
	srcSS.Scope().CopyTo(ss.Scope())
	ss.SetSchemaUrl(srcSS.SchemaUrl())
	span.CopyTo(ss.Spans().AppendEmpty())
	e = a.entry(span.TraceID())
	e.held = append(e.held, heldSpan{td: td, deadline: a.now().Add(a.cfg.Wait), expected: expected})
	a.totalHeld++
	a.tel.held.Add(context.Background(), 1)
	return true
}

// takeReleased returns the requests released so far (evictions, refused
// sends) and, if complete is set, the held requests whose steps are now
// complete. They are sent on their own, not inside the caller's batch: if
// the next consumer refused that batch, its sender would retry its own
// spans only, and these would be lost.
func (a *assembler) takeReleased(complete bool) ptrace.Traces {
	out := ptrace.NewTraces()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.released.ResourceSpans().MoveAndAppendTo(out.ResourceSpans())
	if !complete {
		return out
	}
	for _, e := range a.traces {
		if len(e.held) > 0 && e.complete() {
			a.remove(e)
			a.releaseInto(out, e, false)
		}
	}
	return out
}

// expire releases held requests past their deadline (all of them when all
// is set) and drops step-only traces whose request never came.
func (a *assembler) expire(now time.Time, all bool) ptrace.Traces {
	out := ptrace.NewTraces()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.released.ResourceSpans().MoveAndAppendTo(out.ResourceSpans())
	for el := a.byAge.Front(); el != nil; {
		e := el.Value.(*traceEntry)
		el = el.Next()
		switch {
		case all:
		case len(e.held) > 0:
			if now.Before(e.held[0].deadline) {
				continue
			}
		case now.Sub(e.created) < 2*a.cfg.Wait:
			// Steps whose request has not come yet.
			continue
		case len(e.steps) > 0:
			a.tel.evictions.Add(context.Background(), 1, a.tel.evictionAttrs[evictOrphanSteps])
		}
		a.remove(e)
		a.releaseInto(out, e, false)
	}
	return out
}

// releaseInto derives each held request of e with e's steps and appends it
// to out. Caller holds mu.
func (a *assembler) releaseInto(out ptrace.Traces, e *traceEntry, evicted bool) {
	if len(e.held) == 0 {
		return
	}
	steps := e.toSteps()
	for _, h := range e.held {
		rs := h.td.ResourceSpans().At(0)
		ss := rs.ScopeSpans().At(0)
		a.release(ss.Spans().At(0), rs.Resource().Attributes(), derive.ScopeOf(rs, ss), steps, evicted || e.truncated)
		rs.MoveTo(out.ResourceSpans().AppendEmpty())
	}
	a.totalHeld -= len(e.held)
	e.held = nil
}

// emit sends released request spans downstream. They were acknowledged to
// their sender when they were held, so a retryable refusal must not lose
// them: they go back to the released set (within MaxHeld) for the next
// batch or tick. A permanent error, or a full set, drops them, logged and
// counted. The error is returned for shutdown to report.
func (a *assembler) emit(ctx context.Context, td ptrace.Traces) error {
	n := td.SpanCount()
	if n == 0 {
		return nil
	}
	err := a.next.ConsumeTraces(ctx, td)
	if err == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if !consumererror.IsPermanent(err) && a.released.SpanCount()+n <= a.cfg.MaxHeld {
		// td is no longer ours: a fan-out to several consumers marks what
		// it hands them read-only, so the spans are copied back, never
		// moved (moving them panicked with "invalid access to shared data").
		keepCopy(td, a.released)
		a.logger.Debug("held LLM request spans refused downstream; retrying with the next batch", zap.Error(err), zap.Int("spans", n))
		return err
	}
	a.tel.evictions.Add(context.Background(), int64(n), a.tel.evictionAttrs[evictRefused])
	a.logger.Warn("dropping held LLM request spans refused downstream", zap.Error(err), zap.Int("spans", n))
	return err
}

// keepCopy appends a copy of every resource of td to into; td may be
// read-only.
func keepCopy(td, into ptrace.Traces) {
	dst := into.ResourceSpans()
	src := td.ResourceSpans()
	dst.EnsureCapacity(dst.Len() + src.Len())
	for i := range src.Len() {
		src.At(i).CopyTo(dst.AppendEmpty())
	}
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
