// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloprocessor

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/llmslo/llmslo/internal/metadata"
)

const benchT0 = 1_767_225_600_000_000_000

// benchBatch is n spans of the bench module's shapes: a vLLM engine span
// (events < 0) or an OpenLLMetry client span with that many chunk events.
func benchBatch(n, events int) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "bench")
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	for i := range n {
		sp := spans.AppendEmpty()
		sp.SetStartTimestamp(benchT0)
		a := sp.Attributes()
		model := fmt.Sprintf("model-%d", i%3)
		if events < 0 {
			sp.SetName("llm_request")
			sp.SetKind(ptrace.SpanKindServer)
			sp.SetEndTimestamp(benchT0 + 1_093_200_000)
			require.NoError(nil, a.FromRaw(map[string]any{"gen_ai.request.id": "cmpl", "gen_ai.response.model": model,
				"gen_ai.request.max_tokens": 1024, "gen_ai.request.temperature": 0.7, "gen_ai.request.top_p": 0.95,
				"gen_ai.usage.prompt_tokens": 512, "gen_ai.usage.completion_tokens": 128,
				"gen_ai.latency.time_to_first_token": 0.162, "gen_ai.latency.e2e": 1.093, "gen_ai.latency.time_in_queue": 0.004,
				"gen_ai.latency.time_in_model_prefill": 0.158, "gen_ai.latency.time_in_model_decode": 0.931}))
			continue
		}
		sp.SetName("openai.chat")
		sp.SetKind(ptrace.SpanKindClient)
		require.NoError(nil, a.FromRaw(map[string]any{"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
			"gen_ai.request.model": model, "gen_ai.response.model": model, "gen_ai.is_streaming": true,
			"gen_ai.usage.input_tokens": 512, "gen_ai.usage.output_tokens": events, "server.address": "api.openai.com"}))
		at := int64(benchT0 + 150_000_000)
		for e := range events {
			ev := sp.Events().AppendEmpty()
			ev.SetName("gen_ai.content.completion.chunk")
			ev.SetTimestamp(pcommon.Timestamp(at))
			ev.Attributes().PutInt("gen_ai.usage.output_tokens", 1)
			at += 7_000_000 + int64(e%5)*100_000
		}
		sp.SetEndTimestamp(pcommon.Timestamp(at + 2_000_000))
	}
	return td
}

// BenchmarkProcessSpans times the processor alone: each batch is copied
// outside the timer (the processor mutates it). The bench module compares
// the processor with its floor; this one isolates the processor's own
// changes from the copy's noise.
func BenchmarkProcessSpans(b *testing.B) {
	cfg := createDefaultConfig().(*Config)
	ttft, tpot, e2e := 500*time.Millisecond, 15*time.Millisecond, 2*time.Second
	cfg.SLOs = []SLOConfig{{Name: "interactive", TTFT: &ttft, TPOT: &tpot, E2E: &e2e}}
	p, err := NewFactory().CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, consumertest.NewNop())
	require.NoError(b, err)
	for _, s := range []struct {
		name          string
		spans, events int
	}{{"vllm_attributes", 1000, -1}, {"chunks_16", 1000, 16}, {"chunks_256", 100, 256}} {
		src := benchBatch(s.spans, s.events)
		b.Run(s.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				td := ptrace.NewTraces()
				src.CopyTo(td)
				b.StartTimer()
				if err := p.ConsumeTraces(context.Background(), td); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*s.spans), "ns/span")
		})
	}
}
