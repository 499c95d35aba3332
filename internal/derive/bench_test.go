// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package derive

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmslo/llmslo/internal/contract"
	"github.com/llmslo/llmslo/internal/preset"
)

// benchEngineSpan is a vLLM engine span as the processor benchmark writes it.
func benchEngineSpan() ptrace.Span {
	s := ptrace.NewSpan()
	s.SetName("llm_request")
	s.SetKind(ptrace.SpanKindServer)
	s.SetStartTimestamp(t0)
	s.SetEndTimestamp(t0 + 1_093_200_000)
	a := s.Attributes()
	a.PutStr("gen_ai.request.id", "cmpl-1")
	a.PutStr("gen_ai.response.model", "model-1")
	a.PutInt("gen_ai.request.max_tokens", 1024)
	a.PutDouble("gen_ai.request.temperature", 0.7)
	a.PutDouble("gen_ai.request.top_p", 0.95)
	a.PutInt("gen_ai.usage.prompt_tokens", 512)
	a.PutInt("gen_ai.usage.completion_tokens", 128)
	a.PutDouble("gen_ai.latency.time_to_first_token", 0.162)
	a.PutDouble("gen_ai.latency.e2e", 1.093)
	a.PutDouble("gen_ai.latency.time_in_queue", 0.004)
	a.PutDouble("gen_ai.latency.time_in_model_prefill", 0.158)
	a.PutDouble("gen_ai.latency.time_in_model_decode", 0.931)
	return s
}

// benchClientSpan is an OpenLLMetry client span with n chunk events.
func benchClientSpan(n int) ptrace.Span {
	s := ptrace.NewSpan()
	s.SetName("openai.chat")
	s.SetKind(ptrace.SpanKindClient)
	s.SetStartTimestamp(t0)
	a := s.Attributes()
	a.PutStr("gen_ai.operation.name", "chat")
	a.PutStr("gen_ai.provider.name", "openai")
	a.PutStr("gen_ai.request.model", "model-1")
	a.PutStr("gen_ai.response.model", "model-1")
	a.PutBool("gen_ai.is_streaming", true)
	a.PutInt("gen_ai.usage.input_tokens", 512)
	a.PutInt("gen_ai.usage.output_tokens", int64(n))
	a.PutStr("server.address", "api.openai.com")
	at := int64(t0 + 150_000_000)
	for e := range n {
		ev := s.Events().AppendEmpty()
		ev.SetName("gen_ai.content.completion.chunk")
		ev.SetTimestamp(pcommon.Timestamp(at))
		ev.Attributes().PutInt("gen_ai.usage.output_tokens", 1)
		at += 7_000_000 + int64(e%5)*100_000
	}
	s.SetEndTimestamp(pcommon.Timestamp(at + 2_000_000))
	return s
}

// benchSemconvSpan is a non-streamed GenAI client span (semconv v1.41),
// which every preset before semconv's is asked about.
func benchSemconvSpan() ptrace.Span {
	s := ptrace.NewSpan()
	s.SetName("chat gpt-4o")
	s.SetKind(ptrace.SpanKindClient)
	s.SetStartTimestamp(t0)
	s.SetEndTimestamp(t0 + 850_000_000)
	a := s.Attributes()
	a.PutStr("gen_ai.operation.name", "chat")
	a.PutStr("gen_ai.provider.name", "openai")
	a.PutStr("gen_ai.request.model", "gpt-4o")
	a.PutStr("gen_ai.response.model", "gpt-4o-2024-08-06")
	a.PutBool("gen_ai.request.stream", false)
	a.PutInt("gen_ai.usage.input_tokens", 300)
	a.PutInt("gen_ai.usage.output_tokens", 90)
	a.PutStr("server.address", "api.openai.com")
	return s
}

// BenchmarkDerive measures the derivation alone (it does not write to the
// span, so no copy is needed), on the processor benchmark's shapes.
func BenchmarkDerive(b *testing.B) {
	keys := contract.NewKeys("llm.")
	table := NewTable(preset.Builtin(), Options{OwnedPrefix: keys.Prefix, Owned: keys.Owns})
	for _, c := range []struct {
		name string
		span ptrace.Span
	}{{"vllm_attributes", benchEngineSpan()}, {"chunks_16", benchClientSpan(16)}, {"chunks_256", benchClientSpan(256)}, {"semconv_client", benchSemconvSpan()}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var res Result
			for b.Loop() {
				if !table.Derive(c.span, &res) {
					b.Fatal("span not recognized")
				}
			}
		})
	}
}
