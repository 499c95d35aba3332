// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package derive

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmslo/llmslo/internal/preset"
)

func withKind(s ptrace.Span, k ptrace.SpanKind) ptrace.Span {
	s.SetKind(k)
	return s
}

// startingAt moves the span's start to startMs, its end and events staying.
func startingAt(startMs float64, s ptrace.Span) ptrace.Span {
	s.SetStartTimestamp(ms(startMs))
	return s
}

var v141 = Scope{Semconv: StreamFlagRequired}

// TestProducers2026 checks one span per producer added in 2026 against the
// formulas, by hand: the unit of each timing attribute, the preset that
// claims the span, and the stream flag each implies.
func TestProducers2026(t *testing.T) {
	strandsAttrs := map[string]any{"gen_ai.operation.name": "chat", "gen_ai.system": "strands-agents",
		"gen_ai.server.time_to_first_token": 150, "gen_ai.server.request.duration": 1180, "gen_ai.usage.output_tokens": 101,
		"gen_ai.usage.cache_read_input_tokens": 1024, "gen_ai.usage.cache_write_input_tokens": 96}
	openlitAttrs := map[string]any{"gen_ai.operation.name": "chat", "gen_ai.request.is_stream": true,
		"gen_ai.server.time_to_first_token": 0.15, "gen_ai.usage.output_tokens": 101}
	tests := []struct {
		name            string
		span            ptrace.Span
		scope           Scope
		preset          string
		origin          Origin
		ttft, e2e, tpot Value
		stream          Tri
		errs            string
	}{
		{name: "strands by scope: TTFT in ms, E2E the span's (its duration is another clock)",
			span: withKind(newSpan("chat", 1200, strandsAttrs), ptrace.SpanKindInternal), scope: Scope{Name: preset.StrandsScope},
			preset: "strands", origin: FromAttributes, ttft: k(0.15), e2e: k(1.2), tpot: k(1.05 / 100), stream: True},
		{name: "strands by shape under another scope",
			span: withKind(newSpan("chat", 1200, strandsAttrs), ptrace.SpanKindInternal), scope: Scope{Name: "strands-agents"},
			preset: "strands", origin: FromAttributes, ttft: k(0.15), e2e: k(1.2), tpot: k(1.05 / 100), stream: True},
		{name: "strands without TTFT: streamed, TTFT not emitted",
			span:   withKind(newSpan("chat", 900, map[string]any{"gen_ai.operation.name": "chat", "gen_ai.usage.output_tokens": 40}), ptrace.SpanKindInternal),
			scope:  Scope{Name: preset.StrandsScope},
			preset: "strands", origin: FromSpan, ttft: missing, e2e: k(0.9), tpot: missing, stream: True, errs: "ttft:not_emitted"},
		{name: "openlit: same key in seconds",
			span: withKind(newSpan("chat gpt-4o-mini", 1200, openlitAttrs), ptrace.SpanKindClient), scope: Scope{Name: "openlit.otel.tracing"},
			preset: "openlit", origin: FromAttributes, ttft: k(0.15), e2e: k(1.2), tpot: k(1.05 / 100), stream: True},
		{name: "a chat INTERNAL span with OpenLIT's stream flag is OpenLIT's",
			span:   withKind(newSpan("chat", 1200, openlitAttrs), ptrace.SpanKindInternal),
			preset: "openlit", origin: FromAttributes, ttft: k(0.15), e2e: k(1.2), tpot: k(1.05 / 100), stream: True},
		{name: "a strands-shaped span of kind CLIENT is not strands': OpenLIT ignores its TTFT without a stream flag",
			span:   withKind(newSpan("chat", 1200, strandsAttrs), ptrace.SpanKindClient),
			preset: "openlit", origin: FromSpan, ttft: missing, e2e: k(1.2), tpot: missing, errs: "ttft:not_emitted"},
		{name: "vercel doStream: ms attributes",
			span: startingAt(10, newSpan("ai.streamText.doStream", 1210, map[string]any{"ai.response.msToFirstChunk": 312.5, "ai.response.msToFinish": 1185.25,
				"ai.usage.outputTokens": 142}, ev{"ai.stream.firstChunk", 322.5, -1})),
			preset: "vercel_ai", origin: FromAttributes, ttft: k(0.3125), e2e: k(1.18525), tpot: k((1.18525 - 0.3125) / 141), stream: True},
		{name: "vercel doStream: first-chunk event as fallback",
			span:   startingAt(1300, newSpan("ai.streamText.doStream", 2500, map[string]any{"ai.usage.completionTokens": 60}, ev{"ai.stream.firstChunk", 1505, -1})),
			preset: "vercel_ai", origin: FromEvents, ttft: k(0.205), e2e: k(1.2), tpot: k(0.995 / 59), stream: True},
		{name: "vercel streamObject: its own TTFT key",
			span:   newSpan("ai.streamObject.doStream", 700, map[string]any{"ai.stream.msToFirstChunk": 95.5, "ai.usage.outputTokens": 33}),
			preset: "vercel_ai", origin: FromAttributes, ttft: k(0.0955), e2e: k(0.7), tpot: k(0.6045 / 32), stream: True},
		{name: "vercel doGenerate does not stream",
			span:   newSpan("ai.generateText.doGenerate", 640, map[string]any{"ai.usage.outputTokens": 25}),
			preset: "vercel_ai", origin: FromSpan, ttft: na, e2e: k(0.64), tpot: na, stream: False},
		{name: "sentry: older TTFT name and its own stream flag",
			span: newSpan("chat gpt-4o-mini", 1400, map[string]any{"gen_ai.operation.name": "chat", "gen_ai.response.streaming": true,
				"gen_ai.response.time_to_first_token": 0.345, "gen_ai.usage.output_tokens": 106}),
			preset: "sentry", origin: FromAttributes, ttft: k(0.345), e2e: k(1.4), tpot: k(1.055 / 105), stream: True},
		{name: "pydantic ai: the metric name as a span attribute",
			span: newSpan("chat gpt-4o", 1000, map[string]any{"gen_ai.operation.name": "chat",
				"gen_ai.client.operation.time_to_first_chunk": 0.1875, "gen_ai.usage.output_tokens": 41}),
			scope: Scope{Name: preset.PydanticAIScope},
			// A time to first chunk is written on streamed calls only.
			preset: "pydantic_ai", origin: FromAttributes, ttft: k(0.1875), e2e: k(1.0), tpot: k(0.8125 / 40), stream: True},
		{name: "semconv: the renamed metric name as a span attribute",
			span: newSpan("chat gpt-4o", 1300, map[string]any{"gen_ai.operation.name": "chat",
				"gen_ai.client.inference.time_to_first_chunk": 0.3, "gen_ai.usage.output_tokens": 51}),
			preset: "semconv", origin: FromAttributes, ttft: k(0.3), e2e: k(1.3), tpot: k(0.02), stream: True},
		{name: "AI SDK 7 convention span under OpenInference: the convention TTFT and mean chunk gap kept",
			span: newSpan("chat gpt-4o-mini", 800, map[string]any{"gen_ai.operation.name": "chat", "openinference.span.kind": "LLM",
				"gen_ai.client.operation.time_to_first_chunk": 0.178, "gen_ai.client.operation.time_per_output_chunk": 0.0196,
				"gen_ai.usage.output_tokens": 30}),
			preset: "openinference", origin: FromAttributes, ttft: k(0.178), e2e: k(0.8), tpot: k(0.622 / 29), stream: True},
		{name: "vllm with the conventions' token names",
			span: newSpan("llm_request", 1200, map[string]any{"gen_ai.latency.time_to_first_token": 0.2, "gen_ai.latency.e2e": 1.2,
				"gen_ai.usage.output_tokens": 101, "gen_ai.usage.input_tokens": 512}),
			preset: "vllm", origin: FromAttributes, ttft: k(0.2), e2e: k(1.2), tpot: k(0.01)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r Result
			require.True(t, NewTable(preset.Builtin(), Options{}).DeriveIn(tt.span, tt.scope, &r))
			assert.Equal(t, tt.preset, r.Preset)
			assert.Equal(t, tt.origin, r.Origin)
			for _, c := range []struct {
				name      string
				want, got Value
			}{{"ttft", tt.ttft, r.TTFT}, {"e2e", tt.e2e, r.E2E}, {"tpot", tt.tpot, r.TPOT}} {
				assert.Equal(t, c.want.S, c.got.S, c.name)
				assert.InDelta(t, c.want.V, c.got.V, 1e-12, c.name)
			}
			assert.Equal(t, tt.stream, r.Stream)
			assert.Equal(t, tt.errs, r.Errors.String())
		})
	}
}

// TestStrandsNeverSeconds: however Strands' millisecond TTFT arrives (int,
// double, string), it is read as milliseconds.
func TestStrandsNeverSeconds(t *testing.T) {
	for _, v := range []any{150, 150.0, "150"} {
		s := withKind(newSpan("chat", 1200, map[string]any{"gen_ai.operation.name": "chat", "gen_ai.server.time_to_first_token": v}), ptrace.SpanKindInternal)
		var r Result
		require.True(t, NewTable(preset.Builtin(), Options{}).DeriveIn(s, Scope{Name: preset.StrandsScope}, &r))
		assert.Equal(t, k(0.15), r.TTFT, "%T", v)
	}
}

// TestNonRequestSpansOfNewProducers: agent, tool and loop spans of the new
// producers are not LLM requests, even under a producer's scope.
func TestNonRequestSpansOfNewProducers(t *testing.T) {
	table := NewTable(preset.Builtin(), Options{})
	for _, c := range []struct {
		span  ptrace.Span
		scope string
	}{
		{withKind(newSpan("execute_event_loop_cycle", 10, map[string]any{"event_loop.cycle_id": "x"}), ptrace.SpanKindInternal), preset.StrandsScope},
		{withKind(newSpan("invoke_agent a", 10, map[string]any{"gen_ai.operation.name": "invoke_agent", "gen_ai.usage.output_tokens": 3}), ptrace.SpanKindInternal), preset.StrandsScope},
		{newSpan("ai.streamText", 10, map[string]any{"ai.usage.outputTokens": 3, "ai.response.msToFirstChunk": 1.0}), "ai"},
		{newSpan("ai.toolCall", 10, map[string]any{"ai.toolCall.name": "weather"}), "ai"},
		{newSpan("execute_tool get_weather", 10, map[string]any{"gen_ai.operation.name": "execute_tool"}), preset.PydanticAIScope},
	} {
		var r Result
		assert.False(t, table.DeriveIn(c.span, Scope{Name: c.scope}, &r), c.span.Name())
	}
}

// TestStreamByConventionVersion: a client span without a stream flag is not
// streamed from semantic conventions v1.41; before, or unknown, its stream
// is unknown. Evidence of a stream and the flag itself always win.
func TestStreamByConventionVersion(t *testing.T) {
	plain := map[string]any{"gen_ai.operation.name": "chat", "gen_ai.usage.output_tokens": 30}
	withTTFT := map[string]any{"gen_ai.operation.name": "chat", "gen_ai.usage.output_tokens": 30, "gen_ai.response.time_to_first_chunk": 0.2}
	flagged := map[string]any{"gen_ai.operation.name": "chat", "gen_ai.usage.output_tokens": 30, "gen_ai.request.stream": true}
	openlit := map[string]any{"gen_ai.operation.name": "chat", "gen_ai.usage.output_tokens": 30, "gen_ai.server.time_to_first_token": 0.8}
	engine := map[string]any{"gen_ai.latency.time_to_first_token": 0.12, "gen_ai.latency.e2e": 0.9, "gen_ai.usage.completion_tokens": 30}
	for _, tt := range []struct {
		name   string
		span   ptrace.Span
		scope  Scope
		stream Tri
		ttft   Value
	}{
		{"v1.41, no flag: not streamed", newSpan("chat m", 900, plain), v141, False, na},
		{"v1.42, no flag: not streamed", newSpan("chat m", 900, plain), Scope{Semconv: SemconvVersion{1, 42, 0}}, False, na},
		{"v2.0, no flag: not streamed", newSpan("chat m", 900, plain), Scope{Semconv: SemconvVersion{2, 0, 0}}, False, na},
		{"v1.40, no flag: unknown", newSpan("chat m", 900, plain), Scope{Semconv: SemconvVersion{1, 40, 9}}, Unknown, missing},
		{"unknown version, no flag: unknown", newSpan("chat m", 900, plain), Scope{}, Unknown, missing},
		{"v1.41, TTFT attribute: streamed", newSpan("chat m", 900, withTTFT), v141, True, k(0.2)},
		{"v1.41, chunk events: streamed", newSpan("chat m", 300, plain, chunk(100, -1), chunk(200, -1)), v141, True, k(0.1)},
		{"v1.41, flag true without TTFT: TTFT missing", newSpan("chat m", 900, flagged), v141, True, missing},
		{"v1.41, OpenLIT's TTFT needs the flag: not streamed", newSpan("chat m", 800, openlit), v141, False, na},
		{"v1.41, engine span: the engine's TTFT holds", newSpan("llm_request", 900, engine), v141, Unknown, k(0.12)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var r Result
			require.True(t, NewTable(preset.Builtin(), Options{}).DeriveIn(tt.span, tt.scope, &r))
			assert.Equal(t, tt.stream, r.Stream)
			assert.Equal(t, tt.ttft, r.TTFT)
		})
	}
}

func TestParseSchemaURL(t *testing.T) {
	for url, want := range map[string]SemconvVersion{
		"https://opentelemetry.io/schemas/1.41.0": {1, 41, 0},
		"https://opentelemetry.io/schemas/1.41.1": {1, 41, 1},
		"http://opentelemetry.io/schemas/1.37.0":  {1, 37, 0},
		"https://opentelemetry.io/schemas/1.42":   {1, 42, 0},
		"https://opentelemetry.io/schemas/1.x.0":  {},
		"https://opentelemetry.io/schemas/":       {},
		"https://opentelemetry.io/schemas/0.0.0":  {},
		"https://example.com/schemas/1.41.0":      {},
		"":                                        {},
	} {
		got, ok := ParseSchemaURL(url)
		assert.Equal(t, want, got, url)
		assert.Equal(t, want != SemconvVersion{}, ok, url)
	}
}

func TestScopeOf(t *testing.T) {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.SetSchemaUrl("https://opentelemetry.io/schemas/1.41.0")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("s")
	assert.Equal(t, newScope("s", SemconvVersion{1, 41, 0}), ScopeOf(rs, ss), "the resource's when the scope has none")
	ss.SetSchemaUrl("https://opentelemetry.io/schemas/1.37.0")
	assert.Equal(t, newScope("s", SemconvVersion{1, 37, 0}), ScopeOf(rs, ss), "the scope's first")
	ss.SetSchemaUrl("https://example.com/schemas/9.0.0")
	assert.Equal(t, newScope("s", SemconvVersion{1, 41, 0}), ScopeOf(rs, ss), "another organisation's schema says nothing")
}

// TestTokenDetails: cache and reasoning counts as each producer names them;
// a bad one is left out and reported.
func TestTokenDetails(t *testing.T) {
	table := NewTable(preset.Builtin(), Options{})
	for _, tt := range []struct {
		span                        ptrace.Span
		read, write, reasoning      int64
		hasRead, hasWrite, hasReasn bool
		errs                        string
	}{
		{span: newSpan("chat m", 100, map[string]any{"gen_ai.operation.name": "chat", "gen_ai.usage.output_tokens": 9,
			"gen_ai.usage.cache_read.input_tokens": 32, "gen_ai.usage.cache_creation.input_tokens": 8, "gen_ai.usage.reasoning.output_tokens": 4}),
			read: 32, write: 8, reasoning: 4, hasRead: true, hasWrite: true, hasReasn: true, errs: "ttft:not_emitted"},
		{span: newSpan("ai.generateText.doGenerate", 100, map[string]any{"ai.usage.outputTokens": 9,
			"ai.usage.cachedInputTokens": 512, "ai.usage.inputTokenDetails.cacheWriteTokens": 64, "ai.usage.reasoningTokens": 3}),
			read: 512, write: 64, reasoning: 3, hasRead: true, hasWrite: true, hasReasn: true},
		{span: newSpan("ChatCompletion", 100, map[string]any{"openinference.span.kind": "LLM", "llm.token_count.completion": 9,
			"llm.token_count.prompt_details.cache_read": 7, "llm.token_count.completion_details.reasoning": -1}),
			read: 7, hasRead: true, errs: "ttft:not_emitted,reasoning.output_tokens:invalid_value"},
	} {
		var r Result
		require.True(t, table.Derive(tt.span, &r))
		assert.Equal(t, []any{tt.read, tt.hasRead, tt.write, tt.hasWrite, tt.reasoning, tt.hasReasn},
			[]any{r.CacheReadInputTokens, r.HasCacheReadInputTokens, r.CacheWriteInputTokens, r.HasCacheWriteInputTokens, r.ReasoningOutputTokens, r.HasReasoningOutputTokens}, tt.span.Name())
		assert.Equal(t, tt.errs, r.Errors.String(), tt.span.Name())
	}
}

// TestCustomPresetScopeKindNone: a custom preset matches on scope, span
// kind and a condition that must not hold, and names its streams.
func TestCustomPresetScopeKindNone(t *testing.T) {
	p := &preset.Preset{Name: "mine", Layer: preset.LayerClient,
		Match:            preset.Match{Any: []preset.Cond{{Scope: "my.tracer"}}, All: []preset.Cond{{SpanKind: "producer"}}, None: []preset.Cond{{Event: "skip"}}},
		Map:              preset.Mapping{TTFT: []preset.TimingAttr{{Key: "t_us", Unit: preset.Microseconds}}},
		StreamBySpanName: map[string]bool{"stream": true}}
	require.NoError(t, p.Validate())
	table := NewTable([]*preset.Preset{p}, Options{})
	span := withKind(newSpan("stream", 100, map[string]any{"t_us": 12345}), ptrace.SpanKindProducer)
	var r Result
	require.True(t, table.DeriveIn(span, Scope{Name: "my.tracer"}, &r))
	assert.Equal(t, k(0.012345), r.TTFT)
	assert.Equal(t, True, r.Stream)
	assert.False(t, table.DeriveIn(span, Scope{Name: "other"}, &r), "scope")
	assert.False(t, table.DeriveIn(withKind(newSpan("stream", 100, nil), ptrace.SpanKindClient), Scope{Name: "my.tracer"}, &r), "kind")
	assert.False(t, table.DeriveIn(withKind(newSpan("stream", 100, nil, ev{"skip", 50, -1}), ptrace.SpanKindProducer), Scope{Name: "my.tracer"}, &r), "none")

	bad := *p
	bad.Match.All = []preset.Cond{{SpanKind: "sideways"}}
	assert.ErrorContains(t, bad.Validate(), `span_kind "sideways": allowed values are internal, server, client, producer, consumer`)
}

// TestJSONStream: the stream flag read from a parameters document.
func TestJSONStream(t *testing.T) {
	for doc, want := range map[string]Tri{
		`{"stream":false,"temperature":0}`:    False,
		`{"temperature": 0, "stream" : true}`: True,
		`{"stream_options":{},"stream":true}`: True,
		`{"streaming":true}`:                  Unknown,
		`{"stream":"yes"}`:                    Unknown,
		`not json`:                            Unknown,
		``:                                    Unknown,
		`{"x":"` + strings.Repeat("a", maxStreamJSON) + `","stream":true}`: Unknown,
	} {
		assert.Equal(t, want, jsonStream(doc), doc[:min(len(doc), 40)])
	}
}

// TestStreamEvidenceByScope: a producer that writes the time to first
// chunk on every stream (AI SDK 7, both integrations) or flags every stream
// (the Anthropic SDK's own tracing) says by its absence that a call did not
// stream; elsewhere the same span stays unknown.
func TestStreamEvidenceByScope(t *testing.T) {
	aiSDK := map[string]any{"gen_ai.operation.name": "chat", "gen_ai.request.model": "claude-haiku-4-5",
		"gen_ai.client.operation.duration": 0.698, "gen_ai.usage.output_tokens": 51}
	bare := map[string]any{"gen_ai.operation.name": "chat", "gen_ai.request.model": "claude-haiku-4-5", "gen_ai.usage.output_tokens": 51}
	streamed := map[string]any{"gen_ai.operation.name": "chat", "gen_ai.request.stream": true,
		"gen_ai.response.time_to_first_chunk": 0.161, "gen_ai.usage.output_tokens": 51}
	tests := []struct {
		name, scope string
		attrs       map[string]any
		stream      Tri
		ttft        Status
		errs        string
	}{
		{"AI SDK 7 OpenTelemetry integration, non-streamed", preset.AISDKOTelScope, aiSDK, False, NotApplicable, ""},
		{"a gen_ai scope without the integration's duration: not taken as the AI SDK's", preset.AISDKOTelScope, bare, Unknown, Missing, "ttft:not_emitted"},
		{"AI SDK 7 legacy integration (scope ai), non-streamed", preset.AISDKScope, bare, False, NotApplicable, ""},
		{"Anthropic SDK, non-streamed: no flag", preset.AnthropicSDKScope, bare, False, NotApplicable, ""},
		{"Anthropic SDK, streamed", preset.AnthropicSDKScope, streamed, True, Known, ""},
		{"OpenTelemetry's OpenAI instrumentation: no flag, no TTFT, no evidence either way", "@opentelemetry/instrumentation-openai", bare, Unknown, Missing, "ttft:not_emitted"},
	}
	table := NewTable(preset.Builtin(), Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r Result
			require.True(t, table.DeriveIn(withKind(newSpan("chat claude-haiku-4-5", 700, tt.attrs), ptrace.SpanKindClient), Scope{Name: tt.scope}, &r))
			assert.Equal(t, tt.stream, r.Stream)
			assert.Equal(t, tt.ttft, r.TTFT.S)
			assert.Equal(t, tt.errs, r.Errors.String())
		})
	}
}
