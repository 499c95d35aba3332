// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

// Package assembly is the llm_slo processor's trace assembly: it joins the
// step spans of a trace (SGLang decode_loop, TGI send_generation) to their
// request span, holding the request span back while its steps are still in
// flight, and hands an engine's view of a request to the client span of the
// same trace. It is the processor's only state, and exists only when
// trace_assembly is enabled; the processor stays stateless without it.
//
// The processor calls it once per batch (Begin, End) and once per derived
// request span (Span); Settling wraps the next consumer so the assembly
// learns whether a batch was acknowledged. Deriving and writing a span stay
// the processor's: the assembly calls Deps.Release for the spans it lets go.
package assembly

import (
	"container/list"
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/llmslo/llmslo/internal/derive"
	"github.com/llmslo/llmslo/internal/preset"
)

// Config bounds the assembly; the processor's trace_assembly settings, every
// value positive (the processor validates them).
type Config struct {
	// Wait is how long a request span whose steps are not all there is held.
	Wait time.Duration
	// MaxTraces bounds the traces with pending steps or held requests.
	MaxTraces int
	// MaxStepsPerTrace bounds the step timestamps kept for one request.
	MaxStepsPerTrace int
	// MaxSteps bounds the step timestamps kept over all traces.
	MaxSteps int
	// MaxHeldPerTrace bounds the request spans held for one trace.
	MaxHeldPerTrace int
	// MaxHeld bounds the request spans held over all traces.
	MaxHeld int
}

// Deps are what the assembly needs from the processor that hosts it.
type Deps struct {
	// Next is where the assembly sends the request spans it held: the
	// processor's next consumer, not the Settling wrapper.
	Next   consumer.Traces
	Logger *zap.Logger
	// Telemetry counts what the assembly holds and gives up.
	Telemetry Telemetry
	// Release derives and writes a held request span (the processor's
	// write path): from steps when p says they are complete, else from
	// its own attributes alone, marked with p (steps is then nil).
	Release func(span ptrace.Span, resource pcommon.Map, scope derive.Scope, steps *derive.Steps, p Progress)
}

// Telemetry receives the assembly's counts; the processor's own metrics
// implement it.
type Telemetry interface {
	// Held counts request spans taken into the assembly's keeping.
	Held(n int)
	// Evicted counts state dropped (or spans given up) for reason r.
	Evicted(r Reason, n int)
}

// Assembler is the trace assembly of one processor.
//
// Flow: step spans pass through at once; their output times are recorded
// per trace. A request span whose steps are all there (every step its
// output count implies or its last step states, traceEntry.progress) is
// derived at once. Otherwise it is taken out of its batch and held until its
// steps complete or Wait passes, then emitted downstream: sent after a later
// batch when its last steps arrive, or on its own at the deadline. A request
// let go with steps missing (the wait, shutdown, an eviction) is derived
// from its own attributes only, never from part of its steps, and marked
// assembly:incomplete. Memory is bounded by MaxTraces, MaxSteps and MaxHeld
// (per trace and in total); what is evicted is counted and the affected
// request is marked in llm.metrics.error.
//
// Ownership: a request span becomes the assembly's only when the batch that
// carried it is acknowledged downstream (Batch); until then it shares its
// batch's fate, so a batch its sender retries is never held twice. Spans the
// assembly sends are its own; what it handed on it never touches again but
// to copy it: a fan-out downstream marks data read-only. A retryable refusal
// keeps a copy (within MaxHeld) and sends it again with a backoff; a
// permanent refusal, a full retry set or a refusal at shutdown gives the
// spans up, counted by reason and logged.
type Assembler struct {
	cfg     Config
	steps   map[string]*preset.Steps // step span name -> how to read it
	next    consumer.Traces
	logger  *zap.Logger
	now     func() time.Time
	release func(span ptrace.Span, resource pcommon.Map, scope derive.Scope, steps *derive.Steps, p Progress)
	tel     Telemetry

	mu     sync.Mutex
	traces map[pcommon.TraceID]*traceEntry
	// touched lists the entries a batch brought steps to, for one
	// completion check each (recordSteps).
	touched []*traceEntry
	// released holds request spans let go and not yet sent: by an
	// eviction, or by a request of the same trace taking the steps;
	// refused those the next consumer refused, sent again marked as a
	// re-send. The next batch or tick sends them, not before retryAt while
	// the next consumer refuses.
	released ptrace.Traces
	refused  ptrace.Traces
	// retryAt and backoff pace the sends while the next consumer refuses:
	// a retry reaches every consumer of a fan-out again (marked, so that a
	// connector beside a refusing exporter does not count it again), so it
	// is not repeated with every incoming batch. backoff is 0 when the last
	// send was accepted.
	retryAt    time.Time
	backoff    time.Duration
	byAge      list.List // of *traceEntry, oldest first
	totalSteps int
	// totalHeld counts the held request spans of every entry; pending those
	// of batches not yet acknowledged, reserved within MaxHeld.
	totalHeld int
	pending   int
	batches   sync.Pool // of *Batch
	// awaiting holds the Batch of each batch sent on and not yet answered
	// for; as many as batches in flight.
	awaiting map[ptrace.Traces]*Batch

	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
}

// MaxRetryBackoff caps the pause between sends of refused spans; it is the
// exporters' own default (exporterhelper's retry max_interval).
const MaxRetryBackoff = 30 * time.Second

// New returns the assembly of the step spans the presets describe.
func New(cfg Config, presets []*preset.Preset, d Deps) *Assembler {
	a := &Assembler{cfg: cfg, steps: map[string]*preset.Steps{}, next: d.Next, logger: d.Logger, now: time.Now,
		release: d.Release, tel: d.Telemetry, traces: map[pcommon.TraceID]*traceEntry{}, released: ptrace.NewTraces(), refused: ptrace.NewTraces(),
		awaiting: map[ptrace.Traces]*Batch{}}
	for _, p := range presets {
		if p.Steps != nil {
			a.steps[p.Steps.SpanName] = p.Steps
		}
	}
	return a
}

// SetClock replaces the clock (time.Now); tests call it before the first
// batch, and drive the wait timer with Tick instead of Start.
func (a *Assembler) SetClock(now func() time.Time) { a.now = now }

// tick is the period of the wait timer, and the first retry pause.
func (a *Assembler) tick() time.Duration { return max(a.cfg.Wait/4, 10*time.Millisecond) }

// Start runs the wait timer.
func (a *Assembler) Start() {
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
				_ = a.Tick(context.Background())
			}
		}
	}()
}

// Tick is one round of the wait timer: it sends the held requests past
// their deadline and the refused ones whose pause is over, and drops steps
// whose request never came. A refusal is returned; the spans are kept or
// given up as End's are.
func (a *Assembler) Tick(ctx context.Context) error {
	fresh, again := a.expire(a.now(), false)
	return a.send(ctx, fresh, again, false)
}

// Shutdown stops the wait timer and emits every held span. It is safe to
// call more than once and without Start, as the component contract
// requires.
func (a *Assembler) Shutdown(ctx context.Context) error {
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
	fresh, again := a.expire(time.Time{}, true)
	return a.send(ctx, fresh, again, true)
}
