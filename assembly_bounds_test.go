// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloprocessor

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/llmslo/llmslo/internal/assembly"
	"github.com/llmslo/llmslo/internal/metadata"
)

// checkCounters fails t when the assembler's counters drift from the state
// they count.
func checkCounters(t testing.TB, a *assembly.Assembler) {
	t.Helper()
	require.NoError(t, a.Check())
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
