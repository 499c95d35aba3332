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
// llm.metrics.error.
//
// Ownership: a request span becomes the assembly's only when the batch that
// carried it is acknowledged downstream (holdTx); until then it shares its
// batch's fate, so a batch its sender retries is never held twice. Spans the
// assembly sends are its own; what it handed on it never touches again but
// to copy it: a fan-out downstream marks data read-only. A retryable refusal
// keeps a copy (within MaxHeld) and sends it again with a backoff; a
// permanent refusal, a full retry set or a refusal at shutdown gives the
// spans up, counted by reason and logged.
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
	// by the next consumer. The next batch or tick sends them, not before
	// retryAt while the next consumer refuses.
	released ptrace.Traces
	// retryAt and backoff pace the sends while the next consumer refuses:
	// a retry reaches every consumer of a fan-out again (a connector beside
	// a refusing exporter counts the spans once per attempt), so it is not
	// repeated with every incoming batch. backoff is 0 when the last send
	// was accepted.
	retryAt    time.Time
	backoff    time.Duration
	byAge      list.List // of *traceEntry, oldest first
	totalSteps int
	// totalHeld counts the held request spans of every entry; pending those
	// of batches not yet acknowledged (holdTx), reserved within MaxHeld.
	totalHeld int
	pending   int
	txs       sync.Pool // of *holdTx
	// awaiting holds the holdTx of each batch sent on and not yet answered
	// for; as many as batches in flight.
	awaiting map[ptrace.Traces]*holdTx

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
	// The engine's other parts of the request's TTFT, for the attribution
	// of the client span's misses.
	prefill, kvTransfer derive.Value
}

// noteServer remembers an engine span's view for a client span of the same
// trace that arrives later.
func (a *assembler) noteServer(id pcommon.TraceID, res *derive.Result) {
	if res.TTFT.S != derive.Known && res.QueueTime.S != derive.Known {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.entry(id).server = &serverView{ttft: res.TTFT, queueTime: res.QueueTime, prefill: res.PrefillTime, kvTransfer: res.KVTransferTime}
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

// maxRetryBackoff caps the pause between sends of refused spans; it is the
// exporters' own default (exporterhelper's retry max_interval).
const maxRetryBackoff = 30 * time.Second

// tick is the period of the wait timer, and the first retry pause.
func (a *assembler) tick() time.Duration { return max(a.cfg.Wait/4, 10*time.Millisecond) }

func newAssembler(cfg TraceAssemblyConfig, presets []*preset.Preset, next consumer.Traces, logger *zap.Logger, tel *telemetry) *assembler {
	a := &assembler{cfg: cfg, steps: map[string]*preset.Steps{}, next: next, logger: logger, now: time.Now, tel: tel,
		traces: map[pcommon.TraceID]*traceEntry{}, released: ptrace.NewTraces(), awaiting: map[ptrace.Traces]*holdTx{}}
	for _, p := range presets {
		if p.Steps != nil {
			a.steps[p.Steps.SpanName] = p.Steps
		}
	}
	return a
}

func (a *assembler) start() {
	a.stop, a.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(a.done)
		t := time.NewTicker(a.tick())
		defer t.Stop()
		for {
			select {
			case <-a.stop:
				return
			case <-t.C:
				_ = a.emit(context.Background(), a.expire(a.now(), false), false)
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
	return a.emit(ctx, a.expire(time.Time{}, true), true)
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

// holdTx collects the request spans one batch holds back. The batch may
// still be refused downstream, and its sender then sends it again: the
// assembly takes the spans when the batch is acknowledged (settle), so a
// retried batch is held once, and a refused one leaves nothing behind.
type holdTx struct {
	spans []pendingHold
	// perTrace counts spans by trace, for max_held_per_trace; nil until a
	// trace holds a second span in the batch.
	perTrace map[pcommon.TraceID]int
}

type pendingHold struct {
	id   pcommon.TraceID
	held heldSpan
}

func (tx *holdTx) count(id pcommon.TraceID) int {
	if tx.perTrace != nil {
		return tx.perTrace[id]
	}
	n := 0
	for i := range tx.spans {
		if tx.spans[i].id == id {
			n++
		}
	}
	return n
}

func (tx *holdTx) add(id pcommon.TraceID, h heldSpan) {
	if tx.perTrace == nil && len(tx.spans) >= 8 {
		// Past a few spans, counting by scan would grow with the batch.
		tx.perTrace = map[pcommon.TraceID]int{}
		for i := range tx.spans {
			tx.perTrace[tx.spans[i].id]++
		}
	}
	if tx.perTrace != nil {
		tx.perTrace[id]++
	}
	tx.spans = append(tx.spans, pendingHold{id: id, held: h})
}

// begin returns an empty transaction for one batch.
func (a *assembler) begin() *holdTx {
	if tx, ok := a.txs.Get().(*holdTx); ok {
		return tx
	}
	return &holdTx{}
}

// await parks tx until the next consumer answers for td (inFlight).
func (a *assembler) await(td ptrace.Traces, tx *holdTx) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.awaiting[td] = tx
}

// inFlight returns and forgets the holdTx of batch td, nil if it held
// nothing.
func (a *assembler) inFlight(td ptrace.Traces) *holdTx {
	a.mu.Lock()
	defer a.mu.Unlock()
	tx, ok := a.awaiting[td]
	if ok {
		delete(a.awaiting, td)
	}
	return tx
}

// hold keeps a copy of span, with its resource and scope and their
// schema_url (the convention version is read again on release), in tx: the
// assembly takes it when tx settles acknowledged, and keeps it until its
// steps arrive or the wait passes. It reports false, keeping nothing, when
// the trace or the assembler already holds as many request spans as its
// bounds allow.
func (a *assembler) hold(tx *holdTx, span ptrace.Span, srcRS ptrace.ResourceSpans, srcSS ptrace.ScopeSpans, expected int64) bool {
	id := span.TraceID()
	inTrace := tx.count(id)
	a.mu.Lock()
	if e, ok := a.traces[id]; ok {
		inTrace += len(e.held)
	}
	full := a.totalHeld+a.pending >= a.cfg.MaxHeld
	if !full && inTrace < a.cfg.MaxHeldPerTrace {
		a.pending++
	}
	a.mu.Unlock()
	switch {
	case full:
		a.tel.evictions.Add(context.Background(), 1, a.tel.evictionAttrs[evictHeld])
		return false
	case inTrace >= a.cfg.MaxHeldPerTrace:
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
	tx.add(id, heldSpan{td: td, deadline: a.now().Add(a.cfg.Wait), expected: expected})
	return true
}

// settle ends tx. Acknowledged, its spans are held (or released at once
// when steps another batch brought meanwhile complete them); refused, they
// are dropped with the batch, which its sender has been told to send again.
func (a *assembler) settle(tx *holdTx, acknowledged bool) {
	if len(tx.spans) > 0 {
		a.mu.Lock()
		a.pending -= len(tx.spans)
		if acknowledged {
			for i := range tx.spans {
				a.commit(tx.spans[i].id, tx.spans[i].held)
			}
		}
		a.mu.Unlock()
		if acknowledged {
			a.tel.held.Add(context.Background(), int64(len(tx.spans)))
		} else {
			a.logger.Debug("LLM request spans of a batch refused downstream are not held; their sender retries the batch",
				zap.Int("spans", len(tx.spans)))
		}
	}
	clear(tx.spans)
	tx.spans, tx.perTrace = tx.spans[:0], nil
	a.txs.Put(tx)
}

// commit holds h for trace id. A concurrent batch may have brought the
// steps that complete it, or filled the trace's share: it is then released
// at once (marked evicted in the second case). Caller holds mu.
func (a *assembler) commit(id pcommon.TraceID, h heldSpan) {
	e := a.entry(id)
	if len(e.held) >= a.cfg.MaxHeldPerTrace {
		a.tel.evictions.Add(context.Background(), 1, a.tel.evictionAttrs[evictHeldPerTrace])
		a.releaseOne(a.released, e.toSteps(), h, true)
		return
	}
	e.held = append(e.held, h)
	a.totalHeld++
	if len(e.steps) > 0 && e.complete() {
		a.remove(e)
		a.releaseInto(a.released, e, false)
	}
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
	a.takeRetries(out, a.now(), false)
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
	a.takeRetries(out, now, all)
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

// takeRetries moves the released spans into out, unless the next consumer
// refused the last send and its retry pause runs until after now (all: at
// shutdown, regardless). The set is the assembly's own. Caller holds mu.
func (a *assembler) takeRetries(out ptrace.Traces, now time.Time, all bool) {
	if all || !now.Before(a.retryAt) {
		a.released.ResourceSpans().MoveAndAppendTo(out.ResourceSpans())
	}
}

// releaseInto derives each held request of e with e's steps and appends it
// to out. Caller holds mu.
func (a *assembler) releaseInto(out ptrace.Traces, e *traceEntry, evicted bool) {
	if len(e.held) == 0 {
		return
	}
	steps := e.toSteps()
	for _, h := range e.held {
		a.releaseOne(out, steps, h, evicted || e.truncated)
	}
	a.totalHeld -= len(e.held)
	e.held = nil
}

// releaseOne derives the held request h with steps and moves it to out.
// Caller holds mu.
func (a *assembler) releaseOne(out ptrace.Traces, steps *derive.Steps, h heldSpan, evicted bool) {
	rs := h.td.ResourceSpans().At(0)
	ss := rs.ScopeSpans().At(0)
	a.release(ss.Spans().At(0), rs.Resource().Attributes(), derive.ScopeOf(rs, ss), steps, evicted)
	rs.MoveTo(out.ResourceSpans().AppendEmpty())
}

// emit sends released request spans downstream. They were acknowledged to
// their sender, so a retryable refusal must not lose them: a copy goes back
// to the released set (within MaxHeld) for a later batch or tick, after a
// pause that doubles while the refusals last. A permanent error, a full
// set, or any refusal at shutdown (final) gives them up, logged and counted
// by reason. The error is returned for shutdown to report.
func (a *assembler) emit(ctx context.Context, td ptrace.Traces, final bool) error {
	n := td.SpanCount()
	if n == 0 {
		return nil
	}
	err := a.next.ConsumeTraces(ctx, td)
	a.mu.Lock()
	defer a.mu.Unlock()
	if err == nil {
		if a.backoff > 0 {
			a.logger.Info("held LLM request spans accepted downstream again", zap.Int("spans", n))
			a.backoff, a.retryAt = 0, time.Time{}
		}
		return nil
	}
	var reason evictReason
	switch {
	case consumererror.IsPermanent(err):
		reason = evictRefused
	case final:
		reason = evictRefusedAtShutdown
	case a.released.SpanCount()+n > a.cfg.MaxHeld:
		reason = evictRetryFull
	default:
		a.keepRefused(td, n, err)
		return err
	}
	a.tel.evictions.Add(context.Background(), int64(n), a.tel.evictionAttrs[reason])
	a.logger.Warn("giving up held LLM request spans refused downstream", zap.Error(err), zap.Int("spans", n),
		zap.String("reason", evictReasonNames[reason]))
	return err
}

// keepRefused keeps a copy of td, n spans a retryable error refused, for a
// later send, and sets the pause before it. The copy is needed: a fan-out
// downstream marks td read-only before handing it on, and a consumer may
// still hold it, so moving out of it panics ("invalid access to shared
// data"). Caller holds mu.
func (a *assembler) keepRefused(td ptrace.Traces, n int, err error) {
	rss := td.ResourceSpans()
	dst := a.released.ResourceSpans()
	dst.EnsureCapacity(dst.Len() + rss.Len())
	for i := range rss.Len() {
		rss.At(i).CopyTo(dst.AppendEmpty())
	}
	if a.backoff == 0 {
		a.backoff = a.tick()
		a.logger.Warn("held LLM request spans refused downstream; sending them again with a backoff",
			zap.Error(err), zap.Int("spans", n))
	} else {
		a.backoff = min(2*a.backoff, maxRetryBackoff)
		a.logger.Debug("held LLM request spans refused downstream again", zap.Error(err), zap.Int("spans", n),
			zap.Duration("next_try_in", a.backoff))
	}
	a.retryAt = a.now().Add(a.backoff)
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
