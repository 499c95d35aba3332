// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

// Package benchspans builds the LLM request spans the benchmarks share: a
// vLLM engine span, an OpenLLMetry client span with chunk events and a
// semconv client span. One definition keeps the processor's, the
// derivation's and the bench module's figures about the same input.
package benchspans

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// T0 is the spans' start, 2026-01-01T00:00:00Z in Unix ns.
const T0 = 1_767_225_600_000_000_000

// Engine makes sp a vLLM engine span (attributes only) of the given request
// ID and model.
func Engine(sp ptrace.Span, requestID, model string) {
	sp.SetName("llm_request")
	sp.SetKind(ptrace.SpanKindServer)
	sp.SetStartTimestamp(T0)
	sp.SetEndTimestamp(T0 + 1_093_200_000)
	a := sp.Attributes()
	a.PutStr("gen_ai.request.id", requestID)
	a.PutStr("gen_ai.response.model", model)
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
}

// Client makes sp a streamed OpenLLMetry client span of the given model
// with events chunk events of one token each, about 7 ms apart.
func Client(sp ptrace.Span, model string, events int) {
	sp.SetName("openai.chat")
	sp.SetKind(ptrace.SpanKindClient)
	sp.SetStartTimestamp(T0)
	a := sp.Attributes()
	a.PutStr("gen_ai.operation.name", "chat")
	a.PutStr("gen_ai.provider.name", "openai")
	a.PutStr("gen_ai.request.model", model)
	a.PutStr("gen_ai.response.model", model)
	a.PutBool("gen_ai.is_streaming", true)
	a.PutInt("gen_ai.usage.input_tokens", 512)
	a.PutInt("gen_ai.usage.output_tokens", int64(events))
	a.PutStr("server.address", "api.openai.com")
	evs := sp.Events()
	evs.EnsureCapacity(events)
	at := int64(T0 + 150_000_000)
	for e := range events {
		ev := evs.AppendEmpty()
		ev.SetName("gen_ai.content.completion.chunk")
		ev.SetTimestamp(pcommon.Timestamp(at))
		ev.Attributes().PutInt("gen_ai.usage.output_tokens", 1)
		at += 7_000_000 + int64(e%5)*100_000
	}
	sp.SetEndTimestamp(pcommon.Timestamp(at + 2_000_000))
}

// SemconvClient makes sp a non-streamed GenAI client span (semconv v1.41
// attributes, no events).
func SemconvClient(sp ptrace.Span) {
	sp.SetName("chat gpt-4o")
	sp.SetKind(ptrace.SpanKindClient)
	sp.SetStartTimestamp(T0)
	sp.SetEndTimestamp(T0 + 850_000_000)
	a := sp.Attributes()
	a.PutStr("gen_ai.operation.name", "chat")
	a.PutStr("gen_ai.provider.name", "openai")
	a.PutStr("gen_ai.request.model", "gpt-4o")
	a.PutStr("gen_ai.response.model", "gpt-4o-2024-08-06")
	a.PutBool("gen_ai.request.stream", false)
	a.PutInt("gen_ai.usage.input_tokens", 300)
	a.PutInt("gen_ai.usage.output_tokens", 90)
	a.PutStr("server.address", "api.openai.com")
}
