// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package preset

import (
	"fmt"
	"slices"
)

// Attribute names shared by several producers (see the preset tables of
// the project's docs/producers.md for where each comes from).
var (
	outputTokenKeys = []string{"gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens", "llm.token_count.completion"}
	inputTokenKeys  = []string{"gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.prompt"}
	streamKeys      = []string{"gen_ai.request.stream", "gen_ai.request.is_stream", "gen_ai.is_streaming", "llm.is_streaming"}
	modelKeys       = []string{"gen_ai.response.model", "gen_ai.request.model", "llm.model_name", "langfuse.observation.model.name"}

	// Token details, by the names producers write today: the conventions'
	// (cache_write after semantic-conventions-genai #440, cache_creation
	// before it), Strands', OpenLLMetry's and OpenInference's.
	cacheReadKeys = []string{
		"gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_read_input_tokens",
		"llm.token_count.prompt_details.cache_read",
	}
	cacheWriteKeys = []string{
		"gen_ai.usage.cache_write.input_tokens", "gen_ai.usage.cache_creation.input_tokens",
		"gen_ai.usage.cache_write_input_tokens", "gen_ai.usage.cache_creation_input_tokens",
		"llm.token_count.prompt_details.cache_write",
	}
	reasoningKeys = []string{
		"gen_ai.usage.reasoning.output_tokens", "gen_ai.usage.reasoning_tokens",
		"llm.token_count.completion_details.reasoning",
	}

	// semconvTTFT is the client's time to first chunk, in seconds, under
	// every name a semantic-convention emitter puts on its span: the
	// attribute of v1.41, then the v1.41 metric name and its renamed
	// successor used as span attributes (Pydantic AI, the Vercel AI SDK's
	// semconv mode).
	semconvTTFT = []TimingConfig{
		{Key: "gen_ai.response.time_to_first_chunk"},
		{Key: "gen_ai.client.operation.time_to_first_chunk"},
		{Key: "gen_ai.client.inference.time_to_first_chunk"},
	}

	// semconvITLMean is the AI SDK 7 convention span's mean time per output
	// chunk, in seconds: a mean chunk gap (ITL mean), not TPOT, as OpenLIT's
	// time_per_output_token is.
	semconvITLMean = []TimingConfig{{Key: "gen_ai.client.operation.time_per_output_chunk"}}

	// chunkEvents are OpenLLMetry's per-chunk events: the current name (since
	// 0.55.0) and the older one. Every client preset reads them, so a producer
	// that adds them to an otherwise plain span gets ITL for free.
	chunkEvents = EventsConfig{
		Chunk:      []string{"gen_ai.content.completion.chunk", "llm.content.completion.chunk"},
		FirstToken: []string{"First Token Stream Event"},
		TokenCount: "gen_ai.usage.output_tokens",
	}

	// engineMapping is the gen_ai.latency.* family that vLLM, SGLang and
	// TRT-LLM share character for character. TTFT and E2E come from one
	// clock; the engine's prefill/decode times come from another and are
	// deliberately not used for TPOT. All are seconds. vLLM's prefill is
	// first token - scheduled (after its queue time), its decode last token
	// - first token; TRT-LLM's KV transfer is the disaggregated split's.
	engineMapping = AttributesConfig{
		TTFT:           []TimingConfig{{Key: "gen_ai.latency.time_to_first_token"}},
		E2E:            []TimingConfig{{Key: "gen_ai.latency.e2e"}},
		QueueTime:      []TimingConfig{{Key: "gen_ai.latency.time_in_queue"}},
		PrefillTime:    []TimingConfig{{Key: "gen_ai.latency.time_in_model_prefill"}},
		KVTransferTime: []TimingConfig{{Key: "gen_ai.latency.kv_cache_transfer_time"}},
		DecodeTime:     []TimingConfig{{Key: "gen_ai.latency.time_in_model_decode"}},
		OutputTokens:   outputTokenKeys,
		InputTokens:    inputTokenKeys,
		RequestN:       []string{"gen_ai.request.n"},
		Stream:         streamKeys,
		Model:          modelKeys,
		// vLLM PR #54476 adds the conventions' cache-read count.
		CacheReadInputTokens: []string{"gen_ai.usage.cache_read.input_tokens"},
	}

	// sglangMapping is the engine family without its prefill: SGLang's
	// time_in_model_prefill is first token - the tokenizer's dispatch to
	// the scheduler, so it includes the scheduler's wait queue (SGLang
	// writes no time_in_queue) and, on a decode worker's span, the KV
	// transfer. Read as prefill it would put a queueing incident on the
	// prompts.
	sglangMapping = with(engineMapping, func(m *AttributesConfig) { m.PrefillTime = nil })

	// clientMapping is what every client preset reads. The conventions'
	// TTFT and mean chunk gap are read whichever preset claims the span:
	// instrumentations stack (the AI SDK's convention span also carries
	// OpenInference's span kind), and a value the span carries must not be
	// lost to which preset matched first. A preset with a TTFT of its own
	// reads it first and the convention's after (withConventionTTFT).
	clientMapping = AttributesConfig{
		TTFT:                  semconvTTFT,
		ITLMean:               semconvITLMean,
		OutputTokens:          outputTokenKeys,
		InputTokens:           inputTokenKeys,
		Stream:                streamKeys,
		Model:                 modelKeys,
		CacheReadInputTokens:  cacheReadKeys,
		CacheWriteInputTokens: cacheWriteKeys,
		ReasoningOutputTokens: reasoningKeys,
	}
)

// Instrumentation scope names that identify a producer.
const (
	// StrandsScope is the tracer of strands-agents/sdk-python
	// (src/strands/telemetry/tracer.py: get_tracer(__name__)).
	StrandsScope = "strands.telemetry.tracer"
	// PydanticAIScope is the tracer of Pydantic AI's InstrumentedModel.
	PydanticAIScope = "pydantic-ai"
	// AISDKScope is the Vercel AI SDK's tracer, of its ai.* spans and of
	// AI SDK 7's convention spans.
	AISDKScope = "ai"
)

// AISDKOTelScope is the tracer of the AI SDK 7 OpenTelemetry integration
// of @ai-sdk/otel (packages/otel/src/open-telemetry.ts:
// trace.getTracer('gen_ai')); the ai scope is its legacy integration's.
const AISDKOTelScope = "gen_ai"

// AISDKOTelWitness is the attribute AI SDK 7's OpenTelemetry integration
// writes at the end of every model call, streamed or not
// (getGenAIClientPerformanceAttributes). "gen_ai" is a generic tracer name:
// only a span that carries it is taken as that integration's.
const AISDKOTelWitness = "gen_ai.client.operation.duration"

// AnthropicSDKScope is the tracer of the Anthropic TypeScript SDK's own
// tracing (its anthropic.messages.create spans).
const AnthropicSDKScope = "com.anthropic.sdk.typescript"

// chunkTTFTOnEveryStream are the scopes whose producer writes the
// conventions' time to first chunk on every streamed call it makes (AI SDK
// 7's convention spans, under both of its integrations), so a span of
// theirs without it did not stream. The value, when not empty, is an
// attribute the span must carry to be taken as that producer's. Elsewhere
// its absence says nothing: a producer may simply not write it.
var chunkTTFTOnEveryStream = map[string]string{AISDKScope: "", AISDKOTelScope: AISDKOTelWitness}

// ChunkTTFTOnEveryStream reports whether the named scope's producer writes
// the conventions' time to first chunk on every streamed call, and the
// attribute a span of it must carry for that to hold ("" for none).
func ChunkTTFTOnEveryStream(scope string) (witness string, ok bool) {
	witness, ok = chunkTTFTOnEveryStream[scope]
	return witness, ok
}

// streamFlagOnEveryStream are the scopes whose producer writes
// gen_ai.request.stream=true on every streamed call and nothing on the
// others, whatever convention version it states (it states none): a span
// of theirs without the flag did not stream. The Anthropic SDK's tracing
// does so.
var streamFlagOnEveryStream = map[string]bool{AnthropicSDKScope: true}

// StreamFlagOnEveryStream reports whether the named scope's producer flags
// every streamed call.
func StreamFlagOnEveryStream(scope string) bool { return streamFlagOnEveryStream[scope] }

// endsStreamsEarly are the scopes whose producer ends the span of some
// streamed calls before the stream is read, with the request's attributes
// only, while its other spans always carry the listed response attributes:
// Traceloop's OpenAI instrumentation on Responses API streams ("not yet
// instrumented" upstream; its non-streamed Responses spans carry the
// response id and the usage).
var endsStreamsEarly = map[string][]string{
	"@traceloop/instrumentation-openai": {"gen_ai.response.id", "gen_ai.usage.output_tokens", "gen_ai.usage.input_tokens"},
}

// EndsStreamsEarly reports whether the named scope's producer ends some
// stream spans early, and the attributes of which one on a span says it
// did not.
func EndsStreamsEarly(scope string) (evidence []string, ok bool) {
	evidence, ok = endsStreamsEarly[scope]
	return evidence, ok
}

// Instrumentation levels: a framework's model call (LangChain's ChatOpenAI)
// and the provider SDK's request it makes (the OpenAI client's) are two
// spans of one request when both are instrumented, each often the root of
// its own trace. The level is the value of the level= qualifier of
// llm.metrics.source, so an SLO's selector can count one of them.
const (
	LevelFramework = "framework"
	LevelProvider  = "provider"
	// LevelUnstated is the selector's word for a span whose source states
	// no level: every producer not in levelScopes.
	LevelUnstated = "unstated"
)

// LevelNames are the values of an SLO selector's levels.
var LevelNames = []string{LevelFramework, LevelProvider, LevelUnstated}

// levelScopes are the instrumentation scopes whose level is known from the
// instrumentation itself (each names the library it patches). A scope not
// listed states no level: a span's attributes alone do not say which layer
// wrote it (Langfuse's LangChain handler and its observeOpenAI share the
// scope langfuse-sdk and their attributes).
var levelScopes = map[string]string{
	"@traceloop/instrumentation-langchain":             LevelFramework,
	"@arizeai/openinference-instrumentation-langchain": LevelFramework,
	"openinference.instrumentation.langchain":          LevelFramework,
	"@traceloop/instrumentation-openai":                LevelProvider,
	"@arizeai/openinference-instrumentation-openai":    LevelProvider,
	"openinference.instrumentation.openai":             LevelProvider,
	"@opentelemetry/instrumentation-openai":            LevelProvider,
}

// LevelOfScope returns the instrumentation level of spans of the named
// scope, or "" when the scope states none.
func LevelOfScope(scope string) string { return levelScopes[scope] }

// with is m changed by f: the built-ins share their attribute lists.
func with(m AttributesConfig, f func(*AttributesConfig)) AttributesConfig {
	f(&m)
	return m
}

// Builtin returns the built-in presets in matching order: the first preset
// whose Match holds claims the span. Specific producers come before the
// generic semantic-convention rule they would also satisfy. Each call returns
// fresh values, so callers may modify them.
//
// The built-ins are written in the schema of custom presets (Config) and
// compiled by its Build, so a custom preset can say all a built-in says.
func Builtin() []*Preset {
	cs := builtinConfigs()
	out := make([]*Preset, 0, len(cs))
	for i := range cs {
		p, err := cs[i].Build()
		if err != nil {
			// The built-ins are constants of this package, and
			// TestBuiltinsValidAndDistinct builds every one of them.
			panic(fmt.Sprintf("preset: built-in %q: %v", cs[i].Name, err))
		}
		out = append(out, p)
	}
	return out
}

// builtinConfigs are the built-ins as written, in matching order.
func builtinConfigs() []Config {
	return slices.Concat(servers(), agentsAndOpenLIT(), sdks(), semconvFamily())
}

// servers are the engines: their spans carry the gen_ai.latency.* family.
func servers() []Config {
	return []Config{
		{
			// TensorRT-LLM copies vLLM's tracing; its KV-transfer attribute is
			// the one thing that tells it apart.
			Name:       "trtllm",
			Layer:      LayerServer,
			Match:      &MatchConfig{Any: []CondConfig{{Attribute: "gen_ai.latency.kv_cache_transfer_time"}}},
			Attributes: engineMapping,
			Events:     &chunkEvents,
		},
		{
			Name:       "vllm",
			Layer:      LayerServer,
			Match:      &MatchConfig{Any: []CondConfig{{SpanName: "llm_request"}}},
			Attributes: engineMapping,
			Events:     &chunkEvents,
		},
		{
			// SGLang's request root is named "<role> Req <rid[:8]>" and carries
			// the request id in "rid". At SGLANG_TRACE_LEVEL 3 each decode
			// step is a decode_loop span a few levels below it.
			Name:       "sglang",
			Layer:      LayerServer,
			Match:      &MatchConfig{Any: []CondConfig{{SpanNameContains: "Req "}}, All: []CondConfig{{Attribute: "rid"}}},
			Attributes: sglangMapping,
			Events:     &chunkEvents,
			Steps:      &StepsConfig{SpanName: "decode_loop", Time: "end", Counter: "decode_ct"},
		},
		{
			// TGI's router names handler spans after the handler and records
			// its timings as Rust Debug duration strings ("1.234567ms"). It
			// has no TTFT and no token count: both come from its
			// send_generation step spans (one per prefill/decode step),
			// whose generation attribute (backends/v3/src/backend.rs,
			// filter_send_generations) says how many tokens a step carries
			// and, on the last step, how many the request generated.
			Name:  "tgi",
			Layer: LayerServer,
			Match: &MatchConfig{
				Any: []CondConfig{{SpanName: "generate_stream"}, {SpanName: "chat_completions"}, {SpanName: "completions"}, {SpanName: "generate"}},
				All: []CondConfig{{Attribute: "total_time"}},
			},
			Attributes: AttributesConfig{
				QueueTime: []TimingConfig{{Key: "queue_time", Unit: "duration"}},
				Model:     modelKeys,
			},
			Steps: &StepsConfig{SpanName: "send_generation", Time: "start", FirstTokenFromSteps: true, Generation: "generation"},
		},
		{
			// Any other span carrying the engine latency family (a vLLM fork, a
			// gateway that copies them).
			Name:       "engine",
			Layer:      LayerServer,
			Match:      &MatchConfig{Any: []CondConfig{{Attribute: "gen_ai.latency.time_to_first_token"}, {Attribute: "gen_ai.latency.e2e"}}},
			Attributes: engineMapping,
			Events:     &chunkEvents,
		},
	}
}

// agentsAndOpenLIT: Strands before OpenLIT, which writes the same keys in
// seconds; the Vercel AI SDK's ai.* spans.
func agentsAndOpenLIT() []Config {
	return []Config{
		strandsPreset(),
		{
			// OpenLIT reuses the semconv server metric names as client span
			// attributes; its "time per output token" is a mean chunk gap.
			Name:  "openlit",
			Layer: LayerClient,
			Match: &MatchConfig{Any: []CondConfig{{Attribute: "gen_ai.server.time_to_first_token"}, {Attribute: "gen_ai.server.time_per_output_token"}}},
			Attributes: with(clientMapping, func(m *AttributesConfig) {
				m.TTFT = withConventionTTFT(TimingConfig{Key: "gen_ai.server.time_to_first_token", FirstEvent: true})
				m.ITLMean = []TimingConfig{{Key: "gen_ai.server.time_per_output_token"}}
			}),
			Events:              &chunkEvents,
			TTFTNeedsStreamFlag: ptr(true),
		},
		vercelAIPreset(),
	}
}

// sdks are the client instrumentations with their own conventions.
func sdks() []Config {
	return []Config{
		{
			Name:  "openllmetry",
			Layer: LayerClient,
			Match: &MatchConfig{Any: []CondConfig{
				{Event: "gen_ai.content.completion.chunk"},
				{Event: "llm.content.completion.chunk"},
				{SpanName: "openai.chat"},
				{SpanName: "openai.completion"},
				{Attribute: "llm.request.type", Values: []string{"chat", "completion"}},
			}},
			Attributes: clientMapping,
			Events:     &chunkEvents,
		},
		{
			Name:  "openinference",
			Layer: LayerClient,
			Match: &MatchConfig{Any: []CondConfig{
				{Attribute: "openinference.span.kind", Values: []string{"LLM"}},
				{Event: "First Token Stream Event"},
			}},
			Attributes: clientMapping,
			Events:     &chunkEvents,
			// The OpenAI instrumentation writes the request's parameters,
			// stream flag included; the LangChain one writes the model's
			// configured parameters ("stream":false on .stream() too), which
			// the level rule in derive keeps from being read.
			StreamJSON: []string{"llm.invocation_parameters"},
		},
		langfuse(),
		{
			Name:  "litellm",
			Layer: LayerClient,
			Match: &MatchConfig{
				Any: []CondConfig{{SpanName: "litellm_request"}, {SpanName: "Received Proxy Server Request"}},
				All: []CondConfig{{Attribute: "gen_ai.request.model"}},
			},
			// LiteLLM v1 puts no TTFT on spans; with LITELLM_OTEL_V2 it
			// writes the conventions' attribute.
			Attributes: with(clientMapping, func(m *AttributesConfig) { m.TTFT = semconvTTFT }),
			Events:     &chunkEvents,
		},
	}
}

// langfuse: Langfuse records the first-token time as an absolute timestamp
// and its usage as a JSON object.
func langfuse() Config {
	return Config{
		Name:  "langfuse",
		Layer: LayerClient,
		Match: &MatchConfig{Any: []CondConfig{{Attribute: "langfuse.observation.type", Values: []string{"generation"}}}},
		Attributes: with(clientMapping, func(m *AttributesConfig) {
			// Both observeOpenAI and the LangChain handler stamp it at
			// the first stream part, a role-only chunk too.
			m.TTFT = withConventionTTFT(TimingConfig{Key: "langfuse.observation.completion_start_time", Unit: "timestamp", FirstPart: true})
			// Langfuse serialises usage as a JSON object.
			m.OutputTokens = append(slices.Clone(outputTokenKeys), "langfuse.observation.usage_details#output")
			m.InputTokens = append(slices.Clone(inputTokenKeys), "langfuse.observation.usage_details#input")
		}),
		Events: &chunkEvents,
		// Langfuse writes the request's parameters, stream flag included.
		StreamJSON: []string{"langfuse.observation.model.parameters"},
	}
}

// semconvFamily: producers that follow the GenAI conventions with a twist,
// then the conventions themselves, which every other generation span satisfies.
func semconvFamily() []Config {
	return []Config{
		{
			// Sentry's SDKs: the older gen_ai.response.time_to_first_token
			// (seconds; renamed to the conventions' time_to_first_chunk in
			// sentry-python #7472) and their own stream flag.
			Name:  "sentry",
			Layer: LayerClient,
			Match: &MatchConfig{Any: []CondConfig{{Attribute: "gen_ai.response.time_to_first_token"}, {Attribute: "gen_ai.response.streaming"}}},
			Attributes: with(clientMapping, func(m *AttributesConfig) {
				m.TTFT = slices.Concat(semconvTTFT, []TimingConfig{{Key: "gen_ai.response.time_to_first_token"}})
				m.Stream = slices.Concat([]string{"gen_ai.response.streaming"}, streamKeys)
			}),
			Events: &chunkEvents,
		},
		{
			// Pydantic AI (and Logfire over it) puts the v1.41 metric name
			// gen_ai.client.operation.time_to_first_chunk (seconds) on its
			// "chat {model}" spans, and sets no stream flag.
			Name:       "pydantic_ai",
			Layer:      LayerClient,
			Match:      &MatchConfig{Any: []CondConfig{{Scope: PydanticAIScope}}},
			Attributes: with(clientMapping, func(m *AttributesConfig) { m.TTFT = semconvTTFT }),
			Events:     &chunkEvents,
		},
		{
			Name:       "semconv",
			Layer:      LayerClient,
			Match:      &MatchConfig{Any: []CondConfig{{Attribute: OperationNameKey, Values: GenerationOperations}}},
			Attributes: with(clientMapping, func(m *AttributesConfig) { m.TTFT = semconvTTFT }),
			Events:     &chunkEvents,
		},
	}
}

// DefaultEvents returns the chunk and first-token event names that the
// built-in client presets read, with their token-count attribute.
func DefaultEvents() Events {
	return Events{
		Chunk:      append([]string(nil), chunkEvents.Chunk...),
		FirstToken: append([]string(nil), chunkEvents.FirstToken...),
		TokenCount: chunkEvents.TokenCount,
	}
}

func strandsPreset() Config {
	return Config{
		// Strands Agents writes the time to first byte and the model's
		// latency in MILLISECONDS (integers) under the conventions'
		// server metric names, which OpenLIT writes in seconds: this
		// preset comes first and claims Strands' spans by their
		// instrumentation scope, or, where the scope is another (the
		// TypeScript SDK names its tracer after the service), by their
		// shape: a span named exactly "chat", kind INTERNAL, with one of
		// those attributes and without OpenLIT's stream flag. OpenLIT's
		// spans are "chat {model}", kind CLIENT. Strands always streams
		// (its models only implement stream()).
		Name:  "strands",
		Layer: LayerClient,
		Match: &MatchConfig{
			Any: []CondConfig{
				{Scope: StrandsScope},
				{Attribute: "gen_ai.server.time_to_first_token"},
				{Attribute: "gen_ai.server.request.duration"},
			},
			All:  []CondConfig{{SpanName: "chat"}, {SpanKind: "internal"}},
			None: []CondConfig{{Attribute: "gen_ai.request.is_stream"}},
		},
		Attributes: with(clientMapping, func(m *AttributesConfig) {
			m.TTFT = withConventionTTFT(TimingConfig{Key: "gen_ai.server.time_to_first_token", Unit: "ms"})
			// gen_ai.server.request.duration (ms) is the provider's own
			// latency (Bedrock's latencyMs), another clock than the TTFT
			// Strands measures: E2E stays the span's, as for every
			// client span, and TPOT never mixes the two.
		}),
		Events:           &chunkEvents,
		StreamBySpanName: map[string]bool{"chat": true},
	}
}

// aiSDKModelCalls are the Vercel AI SDK's operation ids of one model call.
var aiSDKModelCalls = []string{"ai.streamText.doStream", "ai.streamObject.doStream", "ai.generateText.doGenerate", "ai.generateObject.doGenerate"}

// aiSDK6Usage are the usage details AI SDK 6 added (its LanguageModelUsage
// gained inputTokenDetails and outputTokenDetails); AI SDK 5 writes none.
// One on a span says the release stamps the first text part.
var aiSDK6Usage = []string{
	"ai.usage.inputTokenDetails.noCacheTokens", "ai.usage.inputTokenDetails.cacheReadTokens",
	"ai.usage.inputTokenDetails.cacheWriteTokens", "ai.usage.outputTokenDetails.textTokens",
	"ai.usage.outputTokenDetails.reasoningTokens",
}

// withConventionTTFT is a preset's own TTFT attributes, then the
// conventions' (see clientMapping).
func withConventionTTFT(own ...TimingConfig) []TimingConfig { return slices.Concat(own, semconvTTFT) }

func vercelAIPreset() Config {
	return Config{
		// The Vercel AI SDK's ai.* spans (the legacy OpenTelemetry
		// integration and experimental_telemetry): one span per model
		// call, named after it; the root ai.streamText span spans every
		// step and tool call, so it is not a request. Timings are
		// milliseconds from the call's start; the ai.stream.firstChunk
		// event is the fallback for the TTFT attribute.
		Name:  "vercel_ai",
		Layer: LayerClient,
		// Traceloop's SDK renames these spans ("chat gpt-4o-mini", kind
		// INTERNAL) but keeps ai.operationId; the parents' operation ids
		// (ai.streamText, ...) are not model calls and never match.
		Match: &MatchConfig{Any: []CondConfig{
			{SpanName: "ai.streamText.doStream"}, {SpanName: "ai.streamObject.doStream"},
			{SpanName: "ai.generateText.doGenerate"}, {SpanName: "ai.generateObject.doGenerate"},
			{Attribute: "ai.operationId", Values: aiSDKModelCalls},
		}},
		Attributes: with(clientMapping, func(m *AttributesConfig) {
			// AI SDK 5 (and 4) stamp the first stream part of any kind
			// (the provider's role-only chunk too), 6 and 7 the first text
			// part; only 6 and later write the usage details below.
			m.TTFT = withConventionTTFT(TimingConfig{Key: "ai.response.msToFirstChunk", Unit: "ms", FirstPart: true},
				TimingConfig{Key: "ai.stream.msToFirstChunk", Unit: "ms", FirstPart: true})
			m.E2E = []TimingConfig{{Key: "ai.response.msToFinish", Unit: "ms"}}
			// AI SDK 5+ names, then AI SDK 4's.
			m.OutputTokens = slices.Concat(outputTokenKeys, []string{"ai.usage.outputTokens", "ai.usage.completionTokens"})
			m.InputTokens = slices.Concat(inputTokenKeys, []string{"ai.usage.inputTokens", "ai.usage.promptTokens"})
			m.CacheReadInputTokens = slices.Concat([]string{"ai.usage.cachedInputTokens", "ai.usage.inputTokenDetails.cacheReadTokens"}, cacheReadKeys)
			m.CacheWriteInputTokens = slices.Concat([]string{"ai.usage.inputTokenDetails.cacheWriteTokens"}, cacheWriteKeys)
			m.ReasoningOutputTokens = slices.Concat([]string{"ai.usage.reasoningTokens", "ai.usage.outputTokenDetails.reasoningTokens"}, reasoningKeys)
			m.Model = slices.Concat([]string{"gen_ai.response.model", "ai.response.model", "gen_ai.request.model", "ai.model.id"}, modelKeys[2:])
		}),
		Events: &EventsConfig{
			Chunk:      chunkEvents.Chunk,
			FirstToken: []string{"ai.stream.firstChunk", "First Token Stream Event"},
			FirstPart:  []string{"ai.stream.firstChunk"},
			TokenCount: chunkEvents.TokenCount,
		},
		FirstPartUnless:     aiSDK6Usage,
		StreamNameAttribute: "ai.operationId",
		StreamBySpanName: map[string]bool{
			"ai.streamText.doStream": true, "ai.streamObject.doStream": true,
			"ai.generateText.doGenerate": false, "ai.generateObject.doGenerate": false,
		},
	}
}

func ptr[T any](v T) *T { return &v }
