// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package assembly

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/llmslo/llmslo/internal/contract"
	"github.com/llmslo/llmslo/internal/derive"
	"github.com/llmslo/llmslo/internal/preset"
)

const t0 = 1_767_225_600_000_000_000 // 2026-01-01T00:00:00Z, Unix ns

// counts is the assembly's telemetry, in memory.
type counts struct {
	held    int
	evicted [NumReasons]int
}

func (c *counts) Held(n int)              { c.held += n }
func (c *counts) Evicted(r Reason, n int) { c.evicted[r] += n }

// rig drives an assembler as the processor does, on a clock the test moves:
// request spans (SGLang's, attribute rid) go through Span with a result
// carrying their completion tokens, every other span passes; released
// spans are counted, not derived.
type rig struct {
	t        *testing.T
	a        *Assembler
	next     consumer.Traces
	tel      counts
	now      time.Time
	released int
	sglang   *preset.Preset
}

// defaults is trace_assembly's default configuration, with the test
// configuration's wait.
var defaults = Config{Wait: 2 * time.Second, MaxTraces: 10_000, MaxStepsPerTrace: 16_384, MaxSteps: 1_000_000,
	MaxHeldPerTrace: 64, MaxHeld: 10_000}

func newRig(t *testing.T, mutate func(*Config), next consumer.Traces) *rig {
	cfg := defaults
	if mutate != nil {
		mutate(&cfg)
	}
	sglang, ok := preset.ByName("sglang")
	require.True(t, ok)
	r := &rig{t: t, next: next, now: time.Unix(1_767_225_600, 0), sglang: sglang}
	r.a = New(cfg, preset.Builtin(), Deps{Next: next, Logger: zap.NewNop(), Telemetry: &r.tel,
		Release: func(ptrace.Span, pcommon.Map, derive.Scope, *derive.Steps, Progress) { r.released++ }})
	r.a.SetClock(func() time.Time { return r.now })
	return r
}

// consume runs td through the assembly and on to the next consumer, and
// reports whether every span was held (the processor skips the batch).
func (r *rig) consume(td ptrace.Traces) (skip bool) {
	b := r.a.Begin(td)
	rss := td.ResourceSpans()
	for i := range rss.Len() {
		rs := rss.At(i)
		for j := range rs.ScopeSpans().Len() {
			ss := rs.ScopeSpans().At(j)
			ss.Spans().RemoveIf(func(s ptrace.Span) bool { return r.span(b, rs, ss, s).Held })
		}
	}
	if r.a.End(context.Background(), b, td) {
		return true
	}
	require.NoError(r.t, r.a.Settling(r.next).ConsumeTraces(context.Background(), td))
	return false
}

func (r *rig) span(b *Batch, rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, s ptrace.Span) Decision {
	if _, ok := s.Attributes().Get("rid"); !ok {
		return Decision{}
	}
	n, _ := s.Attributes().Get("gen_ai.usage.completion_tokens")
	res := &derive.Result{Layer: preset.LayerServer, OutputTokens: n.Int(), HasOutputTokens: true}
	res.Assembled = r.a.Steps(s, r.sglang, res.OutputTokens, true) != nil
	return r.a.Span(b, Request{Span: s, Resource: rs, Scope: ss, Result: res, Preset: r.sglang})
}

func (r *rig) check() {
	r.t.Helper()
	require.NoError(r.t, r.a.Check())
}

// requestSpan appends an SGLang request span of trace with 5 output
// tokens: it waits for 4 decode steps.
func requestSpan(spans ptrace.SpanSlice, trace byte) {
	s := spans.AppendEmpty()
	s.SetName(" Req 1a2b3c4d")
	s.SetTraceID(pcommon.TraceID{trace})
	s.SetStartTimestamp(t0)
	s.SetEndTimestamp(t0 + 1e9)
	s.Attributes().PutStr("rid", "x")
	s.Attributes().PutInt("gen_ai.usage.completion_tokens", 5)
}

func stepBatch(traceID byte, n int) ptrace.Traces {
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	for i := range n {
		s := spans.AppendEmpty()
		s.SetName("decode_loop")
		s.SetTraceID(pcommon.TraceID{traceID, byte(i >> 16), byte(i >> 8), byte(i)})
		s.SetStartTimestamp(pcommon.Timestamp(1_767_225_600_000_000_000))
		s.SetEndTimestamp(pcommon.Timestamp(1_767_225_600_000_000_000 + int64(i)))
		s.Attributes().PutInt("decode_ct", 1)
	}
	return td
}

// TestAssemblyBounds: a flood of steps whose request never arrives stays
// within max_traces and max_steps; the excess is counted and passes on.
func TestAssemblyBounds(t *testing.T) {
	sink := new(consumertest.TracesSink)
	r := newRig(t, func(c *Config) {
		c.MaxTraces = 100
		c.MaxSteps = 150
		c.MaxStepsPerTrace = 3
	}, sink)
	for b := range 50 {
		r.consume(stepBatch(byte(b), 1000))
		st := r.a.Stats()
		assert.LessOrEqual(t, st.Traces, 100)
		assert.LessOrEqual(t, st.Steps, 150)
	}
	assert.Equal(t, 50*1000, sink.SpanCount(), "step spans pass through")
	r.now = r.now.Add(time.Hour)
	require.NoError(t, r.a.Tick(context.Background()))
	assert.Zero(t, r.a.Stats().Traces)
	assert.Zero(t, r.a.Stats().Steps)
}

// TestAssemblyMemoryFlat: memory stays flat under a flood of distinct
// traces whose request span never arrives.
func TestAssemblyMemoryFlat(t *testing.T) {
	sink := new(consumertest.TracesSink)
	r := newRig(t, func(c *Config) { c.MaxTraces = 1000 }, sink)
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	for b := range 20 {
		r.consume(stepBatch(byte(b), 5000))
		sink.Reset()
	}
	base := heap()
	for b := range 100 {
		r.consume(stepBatch(byte(b+20), 5000))
		sink.Reset()
	}
	assert.Less(t, float64(heap()), float64(base)*1.5+4<<20, "heap grew from %d", base)
	assert.LessOrEqual(t, r.a.Stats().Traces, 1000)
}

// TestAssemblyStepCounterExact: a step of the oldest trace arriving when
// max_steps is reached evicts another trace, never its own (which left its
// steps uncounted and the counter drifting).
func TestAssemblyStepCounterExact(t *testing.T) {
	r := newRig(t, func(c *Config) {
		c.MaxSteps = 4
		c.MaxStepsPerTrace = 4
	}, consumertest.NewNop())
	for _, trace := range []byte{1, 2, 1, 2, 1, 3, 1, 1, 2} {
		td := ptrace.NewTraces()
		s := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
		s.SetName("decode_loop")
		s.SetTraceID(pcommon.TraceID{trace})
		s.SetStartTimestamp(t0)
		s.SetEndTimestamp(t0 + 1e6)
		r.consume(td)
		r.check()
	}
}

// flakyConsumer refuses the first `fail` calls with err.
type flakyConsumer struct {
	fail  int
	err   error
	spans int
}

func (*flakyConsumer) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: true}
}

func (f *flakyConsumer) ConsumeTraces(_ context.Context, td ptrace.Traces) error {
	if f.fail > 0 {
		f.fail--
		return f.err
	}
	f.spans += td.SpanCount()
	return nil
}

// TestAssemblyRetriesRefusedSpans: held spans that the next consumer refuses
// with a retryable error are sent again on the next tick; a permanent error
// drops them and shutdown returns it.
func TestAssemblyRetriesRefusedSpans(t *testing.T) {
	for _, tt := range []struct {
		name      string
		err       error
		delivered int
	}{
		{"retryable", errors.New("queue full"), 1},
		{"permanent", consumererror.NewPermanent(errors.New("bad data")), 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			next := &flakyConsumer{}
			r := newRig(t, nil, next)
			td := ptrace.NewTraces()
			requestSpan(td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans(), 1)
			require.True(t, r.consume(td), "held: nothing left in the batch")
			r.now = r.now.Add(time.Minute)
			next.fail, next.err = 1, tt.err
			require.Error(t, r.a.Tick(context.Background()))
			r.check()
			require.Equal(t, 0, next.spans)
			r.now = r.now.Add(r.a.tick())
			require.NoError(t, r.a.Tick(context.Background()))
			assert.Equal(t, tt.delivered, next.spans)
		})
	}
}

// fanOut hands each batch to every consumer and returns their errors, as
// the collector's fan-out between a processor and its exporters and
// connectors does.
type fanOut []consumer.Traces

func (fanOut) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (f fanOut) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	var errs []error
	for _, c := range f {
		errs = append(errs, c.ConsumeTraces(ctx, td))
	}
	return errors.Join(errs...)
}

// counter counts the spans of each send, as the connector does: a send
// marked as a re-send (contract.Resent) is not counted again.
type counter struct{ spans, sends int }

func (*counter) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (c *counter) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	c.sends++
	if !contract.Resent(ctx) {
		c.spans += td.SpanCount()
	}
	return nil
}

// TestAssemblyRetryCountedOnce: held request spans that an exporter
// refuses with a retryable error n times reach a connector in the same
// fan-out n+1 times; every send after the first is marked, so each span is
// counted once, and the exporter receives each once.
func TestAssemblyRetryCountedOnce(t *testing.T) {
	for _, fails := range []int{1, 5} {
		exporter := &flakyConsumer{fail: fails, err: errors.New("503")}
		conn := &counter{}
		r := newRig(t, nil, fanOut{exporter, conn})
		td := ptrace.NewTraces()
		spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
		for trace := range byte(10) {
			requestSpan(spans, trace+1)
		}
		require.True(t, r.consume(td), "all ten held")
		r.now = r.now.Add(time.Minute)
		for range fails + 1 {
			_ = r.a.Tick(context.Background())
			r.check()
			r.now = r.now.Add(MaxRetryBackoff)
		}
		assert.Equal(t, 10, exporter.spans, "%d refusals: delivered once", fails)
		assert.Equal(t, fails+1, conn.sends, "%d refusals: sends through the fan-out", fails)
		assert.Equal(t, 10, conn.spans, "%d refusals: counted once", fails)
	}
}

// TestAssemblyConcurrentBatches: batches without steps run beside batches
// of steps (a collector's receivers call the processor concurrently). A
// batch with no step must not read the entries another batch is touching:
// it did, unlocked, and a collector under load crashed on a nil entry.
// Run with -race.
func TestAssemblyConcurrentBatches(t *testing.T) {
	r := newRig(t, nil, consumertest.NewNop())
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 300 {
				var td ptrace.Traces
				if g%2 == 0 {
					td = stepBatch(byte(g*64+i%64), 8)
				} else {
					td = ptrace.NewTraces()
					s := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
					s.SetName("not a step")
				}
				b := r.a.Begin(td)
				assert.False(t, b.completed, "no request is held: nothing completes")
				r.a.batches.Put(b)
			}
		}()
	}
	wg.Wait()
	r.check()
}
