// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloprocessor

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/ptracetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/llmslo/llmslo/internal/contract"
	"github.com/llmslo/llmslo/internal/metadata"
)

// assemblyHarness runs the processor in trace-assembly mode with a manual
// clock: the ticker is not started, tests call Tick themselves.
type assemblyHarness struct {
	t    *testing.T
	p    processor.Traces
	impl *llmSLOProcessor
	sink *consumertest.TracesSink
	now  time.Time
}

func newAssemblyHarness(t *testing.T, mutate func(*Config)) *assemblyHarness {
	cfg, err := loadConfig(t, "assembly")
	require.NoError(t, err)
	if mutate != nil {
		mutate(cfg)
	}
	h := &assemblyHarness{t: t, sink: new(consumertest.TracesSink), now: time.Unix(1_767_225_600, 0)}
	set := processortest.NewNopSettings(metadata.Type)
	h.impl, err = newProcessor(set, cfg, h.sink)
	require.NoError(t, err)
	h.impl.asm.SetClock(func() time.Time { return h.now })
	h.p = h.impl.wrap(t, set, cfg, h.sink)
	return h
}

func (p *llmSLOProcessor) wrap(t *testing.T, set processor.Settings, cfg *Config, next *consumertest.TracesSink) processor.Traces {
	pt, err := newTracesFromImpl(context.Background(), set, cfg, next, p)
	require.NoError(t, err)
	return pt
}

func (h *assemblyHarness) consume(td ptrace.Traces) {
	require.NoError(h.t, h.p.ConsumeTraces(context.Background(), td))
}

// advance moves the clock and releases what is due.
func (h *assemblyHarness) advance(d time.Duration) {
	h.now = h.now.Add(d)
	_ = h.impl.asm.Tick(context.Background())
}

// spans returns every span that reached the sink, by name.
func (h *assemblyHarness) spans() map[string][]ptrace.Span {
	out := map[string][]ptrace.Span{}
	for _, td := range h.sink.AllTraces() {
		rss := td.ResourceSpans()
		for i := 0; i < rss.Len(); i++ {
			sss := rss.At(i).ScopeSpans()
			for j := 0; j < sss.Len(); j++ {
				spans := sss.At(j).Spans()
				for k := 0; k < spans.Len(); k++ {
					out[spans.At(k).Name()] = append(out[spans.At(k).Name()], spans.At(k))
				}
			}
		}
	}
	return out
}

func readInput(t *testing.T, dir string) ptrace.Traces {
	td, err := golden.ReadTraces(filepath.Join("testdata", "traces", dir, "input.yaml"))
	require.NoError(t, err)
	return td
}

// split returns td's spans named (or not named) name as a new batch each.
func split(td ptrace.Traces, isStep func(ptrace.Span) bool) (steps, rest ptrace.Traces) {
	steps, rest = ptrace.NewTraces(), ptrace.NewTraces()
	td.CopyTo(steps)
	td.CopyTo(rest)
	for _, x := range []struct {
		td   ptrace.Traces
		keep bool
	}{{steps, true}, {rest, false}} {
		x.td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().RemoveIf(func(s ptrace.Span) bool { return isStep(s) != x.keep })
	}
	return steps, rest
}

func isStepSpan(s ptrace.Span) bool {
	return s.Name() == "decode_loop" || s.Name() == "send_generation"
}

func doubles(t *testing.T, s ptrace.Span, key string) []float64 {
	v, ok := s.Attributes().Get(key)
	require.True(t, ok, key)
	out, ok := contract.GapsOf(v)
	require.True(t, ok, "%s is %s", key, v.Type())
	return out
}

func num(t *testing.T, s ptrace.Span, key string) float64 {
	v, ok := s.Attributes().Get(key)
	require.True(t, ok, key)
	if v.Type() == pcommon.ValueTypeInt {
		return float64(v.Int())
	}
	return v.Double()
}

// TestAssemblyGolden: SGLang- and TGI-shaped traces, all spans in one batch
// (the request span first, as an exporter may order them), come out with
// the request span enriched from its steps.
func TestAssemblyGolden(t *testing.T) {
	for _, dir := range []string{"sglang_trace", "tgi_trace"} {
		t.Run(dir, func(t *testing.T) {
			h := newAssemblyHarness(t, nil)
			h.consume(readInput(t, dir))
			require.Len(t, h.sink.AllTraces(), 1)
			got := h.sink.AllTraces()[0]
			expectedFile := filepath.Join("testdata", "traces", dir, "expected.yaml")
			if *update {
				require.NoError(t, golden.WriteTracesToFile(expectedFile, got))
			}
			want, err := golden.ReadTraces(expectedFile)
			require.NoError(t, err)
			require.NoError(t, ptracetest.CompareTraces(want, got))
		})
	}
}

// TestAssemblyValues checks the golden outputs' numbers by hand.
func TestAssemblyValues(t *testing.T) {
	h := newAssemblyHarness(t, nil)
	h.consume(readInput(t, "sglang_trace"))
	h.consume(readInput(t, "tgi_trace"))
	spans := h.spans()

	// SGLang: TTFT and E2E from the engine's attributes; decode steps end
	// at 260, 320, 390, 480, 880 ms: gaps 60, 70, 90, 400 ms.
	req := spans[" Req 1a2b3c4d"][0]
	assert.InDelta(t, 0.2, num(t, req, "llm.ttft"), 1e-9)
	assert.InDelta(t, 0.9, num(t, req, "llm.e2e"), 1e-9)
	assert.InDelta(t, 0.7/5, num(t, req, "llm.tpot"), 1e-9)
	assert.InDelta(t, 0.155, num(t, req, "llm.itl.mean"), 1e-9)
	assert.InDelta(t, 0.4, num(t, req, "llm.itl.max"), 1e-9)
	assert.InDeltaSlice(t, []float64{0.06, 0.07, 0.09, 0.4}, doubles(t, req, "llm.itl.gaps"), 1e-9)
	src, _ := req.Attributes().Get("llm.metrics.source")
	assert.Equal(t, "sglang:attributes", src.Str())

	// TGI: send_generation steps start at 150, 200, 260, 330, 980 ms: TTFT
	// 150 ms, E2E 980 ms, N = 5 steps, TPOT (980-150)/4 ms, gaps 50, 60,
	// 70, 650 ms; queue_time "11.2ms".
	req = spans["chat_completions"][0]
	assert.InDelta(t, 0.15, num(t, req, "llm.ttft"), 1e-9)
	assert.InDelta(t, 0.98, num(t, req, "llm.e2e"), 1e-9)
	assert.InDelta(t, 0.83/4, num(t, req, "llm.tpot"), 1e-9)
	assert.InDelta(t, 0.0112, num(t, req, "llm.queue_time"), 1e-9)
	assert.Equal(t, 5.0, num(t, req, "llm.output_tokens"))
	assert.InDeltaSlice(t, []float64{0.05, 0.06, 0.07, 0.65}, doubles(t, req, "llm.itl.gaps"), 1e-9)
	src, _ = req.Attributes().Get("llm.metrics.source")
	assert.Equal(t, "tgi:steps,output_tokens_from_steps", src.Str())
	// The other spans of the traces pass untouched.
	for _, name := range []string{"decode_loop", "send_generation", "generate_stream", "schedule"} {
		for _, s := range spans[name] {
			_, ok := s.Attributes().Get("llm.metrics.source")
			assert.False(t, ok, name)
		}
	}
}

// TestAssemblyOutOfOrder: the request span arrives in a batch before its
// steps; it is held, then emitted with the batch that completes it.
func TestAssemblyOutOfOrder(t *testing.T) {
	for _, dir := range []string{"sglang_trace", "tgi_trace"} {
		t.Run(dir, func(t *testing.T) {
			h := newAssemblyHarness(t, nil)
			steps, rest := split(readInput(t, dir), isStepSpan)
			want := rest.SpanCount() - 1
			nSteps := steps.SpanCount()
			h.consume(rest)
			assert.Equal(t, want, h.sink.SpanCount(), "the request span is held")
			h.consume(steps)
			assert.Equal(t, want+1+nSteps, h.sink.SpanCount())
			direct := newAssemblyHarness(t, nil)
			direct.consume(readInput(t, dir))
			for name, ss := range direct.spans() {
				for i, s := range ss {
					if _, ok := s.Attributes().Get("llm.metrics.source"); ok {
						require.NoError(t, ptracetest.CompareSpan(s, h.spans()[name][i]), name)
					}
				}
			}
		})
	}
}

// TestAssemblyMissingSteps: without its steps, a request span waits the
// configured time, then passes with what its own attributes give.
func TestAssemblyMissingSteps(t *testing.T) {
	h := newAssemblyHarness(t, nil)
	_, rest := split(readInput(t, "sglang_trace"), isStepSpan)
	h.consume(rest)
	h.advance(1999 * time.Millisecond)
	assert.Empty(t, h.spans()[" Req 1a2b3c4d"])
	h.advance(time.Millisecond)
	req := h.spans()[" Req 1a2b3c4d"]
	require.Len(t, req, 1)
	assert.InDelta(t, 0.2, num(t, req[0], "llm.ttft"), 1e-9)
	_, ok := req[0].Attributes().Get("llm.itl.max")
	assert.False(t, ok)
	viol, _ := req[0].Attributes().Get("llm.slo.interactive.violations")
	assert.Equal(t, []any{"itl:unknown"}, viol.Slice().AsRaw())
}

// TestAssemblyShutdownFlushes: held spans are emitted on shutdown.
func TestAssemblyShutdownFlushes(t *testing.T) {
	h := newAssemblyHarness(t, nil)
	_, rest := split(readInput(t, "tgi_trace"), isStepSpan)
	n := rest.SpanCount()
	h.consume(rest)
	require.NoError(t, h.p.Shutdown(context.Background()))
	assert.Equal(t, n, h.sink.SpanCount())
	errText, _ := h.spans()["chat_completions"][0].Attributes().Get("llm.metrics.error")
	assert.Equal(t, "ttft:not_emitted,output_tokens:not_emitted,assembly:incomplete", errText.Str())
}

// TestAssemblyJoin: the engine's queue time and TTFT reach the client span
// of the same trace; each span keeps its own layer, so the connector counts
// the request once per layer.
func TestAssemblyJoin(t *testing.T) {
	h := newAssemblyHarness(t, nil)
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	server := spans.AppendEmpty()
	server.SetName("llm_request")
	server.SetTraceID(pcommon.TraceID{9})
	server.SetStartTimestamp(1_767_225_600_010_000_000)
	server.SetEndTimestamp(1_767_225_601_000_000_000)
	require.NoError(t, server.Attributes().FromRaw(map[string]any{"gen_ai.latency.time_to_first_token": 0.15,
		"gen_ai.latency.e2e": 0.99, "gen_ai.latency.time_in_queue": 0.04, "gen_ai.usage.completion_tokens": 10}))
	client := spans.AppendEmpty()
	client.SetName("chat llama")
	client.SetTraceID(pcommon.TraceID{9})
	client.SetStartTimestamp(1_767_225_600_000_000_000)
	client.SetEndTimestamp(1_767_225_601_005_000_000)
	require.NoError(t, client.Attributes().FromRaw(map[string]any{"gen_ai.operation.name": "chat", "gen_ai.request.stream": true,
		"gen_ai.response.time_to_first_chunk": 0.17, "gen_ai.usage.output_tokens": 10}))
	h.consume(td)
	got := h.spans()["chat llama"][0]
	assert.InDelta(t, 0.17, num(t, got, "llm.ttft"), 1e-9)
	assert.InDelta(t, 0.15, num(t, got, "llm.server.ttft"), 1e-9)
	assert.InDelta(t, 0.04, num(t, got, "llm.server.queue_time"), 1e-9)
	layer, _ := got.Attributes().Get("llm.layer")
	assert.Equal(t, "client", layer.Str())
	layer, _ = h.spans()["llm_request"][0].Attributes().Get("llm.layer")
	assert.Equal(t, "server", layer.Str())
}

// TestAssemblySpeculativeSteps: with speculative decoding a step carries
// several tokens (decode_ct rises by more than one), and a step missing
// between two others looks the same: the steps cannot show they are
// complete, so the request waits, then gets its own values, marked.
func TestAssemblySpeculativeSteps(t *testing.T) {
	h := newAssemblyHarness(t, func(c *Config) { c.TokenAwareITL = true })
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	id := pcommon.TraceID{0x5e}
	for k, end := range []int64{300, 360, 390} {
		s := spans.AppendEmpty()
		s.SetName("decode_loop")
		s.SetTraceID(id)
		s.SetStartTimestamp(1_767_225_600_200_000_000)
		s.SetEndTimestamp(pcommon.Timestamp(1_767_225_600_000_000_000 + end*1_000_000))
		s.Attributes().PutInt("decode_ct", int64(2*(k+1)))
	}
	h.consume(td)
	root := ptrace.NewTraces()
	r := root.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	r.SetName(" Req 5eed5eed")
	r.SetTraceID(id)
	r.SetStartTimestamp(1_767_225_600_000_000_000)
	r.SetEndTimestamp(1_767_225_600_400_000_000)
	require.NoError(t, r.Attributes().FromRaw(map[string]any{"rid": "5eed", "gen_ai.latency.time_to_first_token": 0.2,
		"gen_ai.latency.e2e": 0.39, "gen_ai.usage.completion_tokens": 7}))
	h.consume(root)
	got := h.spans()[" Req 5eed5eed"]
	assert.Empty(t, got, "held: counters 2, 4, 6 of 6 decode tokens may hide a missing step")
	h.advance(2 * time.Second)
	got = h.spans()[" Req 5eed5eed"]
	require.Len(t, got, 1)
	want{values: map[string]float64{"llm.ttft": 0.2, "llm.e2e": 0.39}, missing: stepKeys, errText: "assembly:incomplete",
		seen: 3, expected: 6, violations: []any{"itl:unknown"}}.check(t, got[0])
}
