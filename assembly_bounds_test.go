// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloprocessor

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processorhelper"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/llmslo/llmslo/internal/metadata"
)

// checkCounters compares the assembler's counters with the state they
// count: the steps and held spans of every entry, and the age list.
func checkCounters(t testing.TB, a *assembler) {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	steps, held := 0, 0
	for id, e := range a.traces {
		require.Equal(t, id, e.id)
		steps += len(e.steps)
		held += len(e.held)
		require.LessOrEqual(t, len(e.steps), a.cfg.MaxStepsPerTrace)
		require.LessOrEqual(t, len(e.held), a.cfg.MaxHeldPerTrace)
	}
	require.Equal(t, steps, a.totalSteps, "step counter")
	require.Equal(t, held, a.totalHeld, "held counter")
	require.Equal(t, len(a.traces), a.byAge.Len(), "age list")
	require.LessOrEqual(t, a.totalSteps, a.cfg.MaxSteps)
	require.LessOrEqual(t, a.totalHeld, a.cfg.MaxHeld)
	require.LessOrEqual(t, len(a.traces), a.cfg.MaxTraces)
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

// TestAssemblyStepCounterExact: a step of the oldest trace arriving when
// max_steps is reached evicts another trace, never its own (which left its
// steps uncounted and the counter drifting).
func TestAssemblyStepCounterExact(t *testing.T) {
	h := newAssemblyHarness(t, func(c *Config) {
		c.TraceAssembly.MaxSteps = 4
		c.TraceAssembly.MaxStepsPerTrace = 4
	})
	a := h.impl.asm
	for _, trace := range []byte{1, 2, 1, 2, 1, 3, 1, 1, 2} {
		td := ptrace.NewTraces()
		s := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
		s.SetName("decode_loop")
		s.SetTraceID(pcommon.TraceID{trace})
		s.SetStartTimestamp(t0)
		s.SetEndTimestamp(t0 + 1e6)
		h.consume(td)
		checkCounters(t, a)
	}
}

// TestAssemblyHeldBounds: beyond max_held_per_trace (and max_held) a
// request span is not held: it passes at once, derived from its own
// attributes, with itl:overflow.
func TestAssemblyHeldBounds(t *testing.T) {
	h := newAssemblyHarness(t, func(c *Config) {
		c.TraceAssembly.MaxHeldPerTrace = 2
		c.TraceAssembly.MaxHeld = 3
	})
	for _, trace := range []byte{1, 1, 1, 2, 2} {
		td := ptrace.NewTraces()
		requestSpan(td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans(), trace)
		h.consume(td)
		checkCounters(t, h.impl.asm)
	}
	passed := h.spans()[" Req 1a2b3c4d"]
	require.Len(t, passed, 2, "the third of trace 1 (per trace) and the second of trace 2 (in total)")
	for _, s := range passed {
		errText, _ := s.Attributes().Get("llm.metrics.error")
		assert.Equal(t, "ttft:not_emitted,itl:overflow", errText.Str())
	}
	require.NoError(t, h.p.Shutdown(context.Background()))
	assert.Len(t, h.spans()[" Req 1a2b3c4d"], 5, "the held ones at shutdown")
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
			cfg, err := loadConfig(t, "assembly")
			require.NoError(t, err)
			next := &flakyConsumer{}
			p, err := newProcessor(processortest.NewNopSettings(metadata.Type), cfg, next)
			require.NoError(t, err)
			now := time.Unix(1_767_225_600, 0)
			p.asm.now = func() time.Time { return now }
			td := ptrace.NewTraces()
			requestSpan(td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans(), 1)
			_, err = p.processTraces(context.Background(), td)
			require.ErrorIs(t, err, processorhelper.ErrSkipProcessingData, "held: nothing left in the batch")
			now = now.Add(time.Minute)
			next.fail, next.err = 1, tt.err
			require.Error(t, p.asm.emit(context.Background(), p.asm.expire(now, false), false))
			checkCounters(t, p.asm)
			require.Equal(t, 0, next.spans)
			now = now.Add(p.asm.tick())
			require.NoError(t, p.asm.emit(context.Background(), p.asm.expire(now, false), false))
			assert.Equal(t, tt.delivered, next.spans)
		})
	}
}

// TestAssemblyShutdownReturnsRefusal: a refusal of the spans flushed at
// shutdown is returned, not only logged.
func TestAssemblyShutdownReturnsRefusal(t *testing.T) {
	cfg, err := loadConfig(t, "assembly")
	require.NoError(t, err)
	next := &flakyConsumer{fail: 1, err: errors.New("exporter down")}
	p, err := newProcessor(processortest.NewNopSettings(metadata.Type), cfg, next)
	require.NoError(t, err)
	td := ptrace.NewTraces()
	requestSpan(td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans(), 1)
	_, _ = p.processTraces(context.Background(), td)
	require.EqualError(t, p.shutdown(context.Background()), "exporter down")
}
