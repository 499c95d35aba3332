// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package assembly

import (
	"context"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/llmslo/llmslo/internal/derive"
	"github.com/llmslo/llmslo/internal/preset"
)

// Batch is one incoming batch's business with the assembly, from Begin to
// End: the request spans it holds back. The batch may still be refused
// downstream, and its sender then sends it again: the assembly takes the
// spans when the batch is acknowledged (settle), so a retried batch is held
// once, and a refused one leaves nothing behind.
type Batch struct {
	spans []pendingHold
	// perTrace counts spans by trace, for max_held_per_trace; nil until a
	// trace holds a second span in the batch.
	perTrace map[pcommon.TraceID]int
	// completed: the batch's steps completed a request held earlier.
	completed bool
}

type pendingHold struct {
	id   pcommon.TraceID
	held heldSpan
}

func (b *Batch) count(id pcommon.TraceID) int {
	if b.perTrace != nil {
		return b.perTrace[id]
	}
	n := 0
	for i := range b.spans {
		if b.spans[i].id == id {
			n++
		}
	}
	return n
}

func (b *Batch) add(id pcommon.TraceID, h heldSpan) {
	if b.perTrace == nil && len(b.spans) >= 8 {
		// Past a few spans, counting by scan would grow with the batch.
		b.perTrace = map[pcommon.TraceID]int{}
		for i := range b.spans {
			b.perTrace[b.spans[i].id]++
		}
	}
	if b.perTrace != nil {
		b.perTrace[id]++
	}
	b.spans = append(b.spans, pendingHold{id: id, held: h})
}

// Begin starts batch td: it records td's step spans, before any request
// span of td is derived, so a request whose steps came with it is derived
// from them at once.
func (a *Assembler) Begin(td ptrace.Traces) *Batch {
	b, ok := a.batches.Get().(*Batch)
	if !ok {
		b = &Batch{}
	}
	b.completed = a.recordSteps(td)
	return b
}

// Request is a request span of the batch, derived (from its steps when the
// assembly had them all, through Steps).
type Request struct {
	Span ptrace.Span
	// Resource and Scope are the span's; a held span keeps a copy of both.
	Resource ptrace.ResourceSpans
	Scope    ptrace.ScopeSpans
	// Result is the span's derivation. Span may mark in it why the step
	// timing is missing (itl:overflow).
	Result *derive.Result
	// Preset is the preset that claimed the span.
	Preset *preset.Preset
}

// Decision is what becomes of a request span.
type Decision struct {
	// Held: the assembly keeps a copy, and writes it when it lets it go;
	// the processor removes the span from its batch and writes nothing.
	Held bool
	// Server, for a client span that is not held, is the engine's view of
	// the same request when an engine span of the trace came first (the
	// usual order: the engine finishes before its client does); the
	// processor joins it onto the span. Nil otherwise.
	Server *ServerView
}

// Span decides what becomes of request span r of batch b: written now (the
// zero Decision), held back, or written now and joined with the engine's
// view. It is the processor's one call per span.
func (a *Assembler) Span(b *Batch, r Request) Decision {
	res := r.Result
	id := r.Span.TraceID()
	if res.Layer == preset.LayerServer {
		a.noteServer(id, res)
	}
	if r.Preset.Steps != nil {
		expected, wait := stepsToWaitFor(r.Preset, res.OutputTokens, res.HasOutputTokens)
		if res.Assembled || !wait {
			return Decision{}
		}
		if !a.hold(b, r, expected) {
			// Held state is full: the span passes at once, derived from
			// its own attributes, saying why its step timing is missing.
			res.Errors.Set(derive.FieldITL, derive.Overflow)
			return Decision{}
		}
		return Decision{Held: true}
	}
	if res.Layer == preset.LayerClient {
		return Decision{Server: a.serverViewOf(id)}
	}
	return Decision{}
}

// hold keeps a copy of r's span, with its resource and scope and their
// schema_url (the convention version is read again on release), in b: the
// assembly takes it when b settles acknowledged, and keeps it until its
// steps arrive or the wait passes. It reports false, keeping nothing, when
// the trace or the assembler already holds as many request spans as its
// bounds allow.
func (a *Assembler) hold(b *Batch, r Request, expected int64) bool {
	id := r.Span.TraceID()
	inTrace := b.count(id)
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
		a.tel.Evicted(EvictHeld, 1)
		return false
	case inTrace >= a.cfg.MaxHeldPerTrace:
		a.tel.Evicted(EvictHeldPerTrace, 1)
		return false
	}
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	r.Resource.Resource().CopyTo(rs.Resource())
	rs.SetSchemaUrl(r.Resource.SchemaUrl())
	ss := rs.ScopeSpans().AppendEmpty()
	r.Scope.Scope().CopyTo(ss.Scope())
	ss.SetSchemaUrl(r.Scope.SchemaUrl())
	r.Span.CopyTo(ss.Spans().AppendEmpty())
	b.add(id, heldSpan{td: td, deadline: a.now().Add(a.cfg.Wait), expected: expected})
	return true
}

// End finishes batch b, whose held spans the processor has removed from
// td. It sends what the assembly let go meanwhile, on its own (not inside
// td: if the next consumer refused td, its sender would retry its own spans
// only, and these would be lost), and settles b's holds: now when b held
// nothing or nothing of td is left, else with the next consumer's answer
// for td (Settling). skip reports that b held spans and td is now empty:
// nothing goes on, and the processor acknowledges td as it stands
// (processorhelper.ErrSkipProcessingData).
func (a *Assembler) End(ctx context.Context, b *Batch, td ptrace.Traces) (skip bool) {
	// A refused send keeps the spans for the next batch or tick.
	fresh, again := a.takeReleased(b.completed)
	_ = a.send(ctx, fresh, again, false)
	switch {
	case len(b.spans) == 0:
		a.settle(b, true)
	case td.SpanCount() == 0:
		a.settle(b, true)
		return true
	default:
		a.mu.Lock()
		a.awaiting[td] = b
		a.mu.Unlock()
	}
	return false
}

// inFlight returns and forgets the Batch of td, nil if it held nothing.
func (a *Assembler) inFlight(td ptrace.Traces) *Batch {
	a.mu.Lock()
	defer a.mu.Unlock()
	b, ok := a.awaiting[td]
	if ok {
		delete(a.awaiting, td)
	}
	return b
}

// settle ends b. Acknowledged, its spans are held (or released at once
// when steps another batch brought meanwhile complete them); refused, they
// are dropped with the batch, which its sender has been told to send again.
func (a *Assembler) settle(b *Batch, acknowledged bool) {
	if len(b.spans) > 0 {
		a.mu.Lock()
		a.pending -= len(b.spans)
		if acknowledged {
			for i := range b.spans {
				a.commit(b.spans[i].id, b.spans[i].held)
			}
		}
		a.mu.Unlock()
		if acknowledged {
			a.tel.Held(len(b.spans))
		} else {
			a.logger.Debug("LLM request spans of a batch refused downstream are not held; their sender retries the batch",
				zap.Int("spans", len(b.spans)))
		}
	}
	clear(b.spans)
	b.spans, b.perTrace, b.completed = b.spans[:0], nil, false
	a.batches.Put(b)
}

// commit holds h for trace id. A concurrent batch may have brought the
// steps that complete it, or filled the trace's share: it is then released
// at once (marked evicted in the second case). Caller holds mu.
func (a *Assembler) commit(id pcommon.TraceID, h heldSpan) {
	e := a.entry(id)
	if len(e.held) >= a.cfg.MaxHeldPerTrace {
		a.tel.Evicted(EvictHeldPerTrace, 1)
		a.releaseOne(a.released, e, nil, h, true)
		return
	}
	e.held = append(e.held, h)
	a.totalHeld++
	if len(e.steps) > 0 && e.complete() {
		a.remove(e)
		a.releaseInto(a.released, e, false)
	}
}

// Settling wraps next, the next consumer as processorhelper sees it, so
// the assembly learns whether the next consumer acknowledged a batch and
// settles the request spans the batch held back accordingly.
func (a *Assembler) Settling(next consumer.Traces) consumer.Traces {
	return settlingNext{Traces: next, a: a}
}

// settlingNext is Settling's consumer. processorhelper hands the batch
// processTraces returned to it unchanged, and the context too, which is why
// the batch is what finds its Batch.
type settlingNext struct {
	consumer.Traces
	a *Assembler
}

func (n settlingNext) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	b := n.a.inFlight(td)
	err := n.Traces.ConsumeTraces(ctx, td)
	if b != nil {
		n.a.settle(b, err == nil)
	}
	return err
}
