package preset

import "slices"

// Attribute names shared by several producers (see the project README's
// preset tables for where each comes from).
var (
	outputTokenKeys = []string{"gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens", "llm.token_count.completion"}
	inputTokenKeys  = []string{"gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.prompt"}
	streamKeys      = []string{"gen_ai.request.stream", "gen_ai.request.is_stream", "gen_ai.is_streaming", "llm.is_streaming"}
	modelKeys       = []string{"gen_ai.response.model", "gen_ai.request.model", "llm.model_name", "langfuse.observation.model.name"}

	// chunkEvents are OpenLLMetry's per-chunk events: the current name (since
	// 0.55.0) and the older one. Every client preset reads them, so a producer
	// that adds them to an otherwise plain span gets ITL for free.
	chunkEvents = Events{
		Chunk:      []string{"gen_ai.content.completion.chunk", "llm.content.completion.chunk"},
		FirstToken: []string{"First Token Stream Event"},
		TokenCount: "gen_ai.usage.output_tokens",
	}

	// engineMapping is the gen_ai.latency.* family that vLLM, SGLang and
	// TRT-LLM share character for character. TTFT and E2E come from one
	// clock; the engine's prefill/decode times come from another and are
	// deliberately not used for TPOT.
	engineMapping = Mapping{
		TTFT:         []TimingAttr{{Key: "gen_ai.latency.time_to_first_token"}},
		E2E:          []TimingAttr{{Key: "gen_ai.latency.e2e"}},
		QueueTime:    []TimingAttr{{Key: "gen_ai.latency.time_in_queue"}},
		OutputTokens: outputTokenKeys,
		InputTokens:  inputTokenKeys,
		RequestN:     []string{"gen_ai.request.n"},
		Stream:       streamKeys,
		Model:        modelKeys,
	}

	clientMapping = Mapping{
		OutputTokens: outputTokenKeys,
		InputTokens:  inputTokenKeys,
		Stream:       streamKeys,
		Model:        modelKeys,
	}
)

func with(m Mapping, f func(*Mapping)) Mapping {
	f(&m)
	return m
}

// Builtin returns the built-in presets in matching order: the first preset
// whose Match holds claims the span. Specific producers come before the
// generic semantic-convention rule they would also satisfy. Each call returns
// fresh values, so callers may modify them.
func Builtin() []*Preset {
	return []*Preset{
		{
			// TensorRT-LLM copies vLLM's tracing; its KV-transfer attribute is
			// the one thing that tells it apart.
			Name:  "trtllm",
			Layer: LayerServer,
			Match: Match{Any: []Cond{{Attribute: "gen_ai.latency.kv_cache_transfer_time"}}},
			Map:   engineMapping,
			Ev:    chunkEvents,
		},
		{
			Name:  "vllm",
			Layer: LayerServer,
			Match: Match{Any: []Cond{{SpanName: "llm_request"}}},
			Map:   engineMapping,
			Ev:    chunkEvents,
		},
		{
			// SGLang's request root is named "<role> Req <rid[:8]>" and carries
			// the request id in "rid". At SGLANG_TRACE_LEVEL 3 each decode
			// step is a decode_loop span a few levels below it.
			Name:  "sglang",
			Layer: LayerServer,
			Match: Match{Any: []Cond{{SpanNameContains: "Req "}}, All: []Cond{{Attribute: "rid"}}},
			Map:   engineMapping,
			Ev:    chunkEvents,
			Steps: &Steps{SpanName: "decode_loop", Time: StepEnd, Counter: "decode_ct"},
		},
		{
			// TGI's router names handler spans after the handler and records
			// its timings as Rust Debug duration strings ("1.234567ms"). It
			// has no TTFT and no token count: both come from its
			// send_generation step spans (one per prefill/decode step).
			Name:  "tgi",
			Layer: LayerServer,
			Match: Match{
				Any: []Cond{{SpanName: "generate_stream"}, {SpanName: "chat_completions"}, {SpanName: "completions"}, {SpanName: "generate"}},
				All: []Cond{{Attribute: "total_time"}},
			},
			Map: Mapping{
				QueueTime: []TimingAttr{{Key: "queue_time", Unit: Duration}},
				Model:     modelKeys,
			},
			Steps: &Steps{SpanName: "send_generation", Time: StepStart, FirstTokenFromSteps: true},
		},
		{
			// Any other span carrying the engine latency family (a vLLM fork, a
			// gateway that copies them).
			Name:  "engine",
			Layer: LayerServer,
			Match: Match{Any: []Cond{{Attribute: "gen_ai.latency.time_to_first_token"}, {Attribute: "gen_ai.latency.e2e"}}},
			Map:   engineMapping,
			Ev:    chunkEvents,
		},
		{
			// OpenLIT reuses the semconv server metric names as client span
			// attributes; its "time per output token" is a mean chunk gap.
			Name:  "openlit",
			Layer: LayerClient,
			Match: Match{Any: []Cond{{Attribute: "gen_ai.server.time_to_first_token"}, {Attribute: "gen_ai.server.time_per_output_token"}}},
			Map: with(clientMapping, func(m *Mapping) {
				m.TTFT = []TimingAttr{{Key: "gen_ai.server.time_to_first_token"}}
				m.ITLMean = []TimingAttr{{Key: "gen_ai.server.time_per_output_token"}}
			}),
			Ev:                  chunkEvents,
			TTFTNeedsStreamFlag: true,
		},
		{
			Name:  "openllmetry",
			Layer: LayerClient,
			Match: Match{Any: []Cond{
				{Event: "gen_ai.content.completion.chunk"},
				{Event: "llm.content.completion.chunk"},
				{SpanName: "openai.chat"},
				{SpanName: "openai.completion"},
				{Attribute: "llm.request.type", AttributeValues: []string{"chat", "completion"}},
			}},
			Map: clientMapping,
			Ev:  chunkEvents,
		},
		{
			Name:  "openinference",
			Layer: LayerClient,
			Match: Match{Any: []Cond{
				{Attribute: "openinference.span.kind", AttributeValues: []string{"LLM"}},
				{Event: "First Token Stream Event"},
			}},
			Map: clientMapping,
			Ev:  chunkEvents,
		},
		{
			// Langfuse records the first-token time as an absolute timestamp.
			Name:  "langfuse",
			Layer: LayerClient,
			Match: Match{Any: []Cond{{Attribute: "langfuse.observation.type", AttributeValues: []string{"generation"}}}},
			Map: with(clientMapping, func(m *Mapping) {
				m.TTFT = []TimingAttr{{Key: "langfuse.observation.completion_start_time", Unit: Timestamp}}
				// Langfuse serialises usage as a JSON object.
				m.OutputTokens = append(slices.Clone(outputTokenKeys), "langfuse.observation.usage_details#output")
				m.InputTokens = append(slices.Clone(inputTokenKeys), "langfuse.observation.usage_details#input")
			}),
			Ev: chunkEvents,
		},
		{
			Name:  "litellm",
			Layer: LayerClient,
			Match: Match{
				Any: []Cond{{SpanName: "litellm_request"}, {SpanName: "Received Proxy Server Request"}},
				All: []Cond{{Attribute: "gen_ai.request.model"}},
			},
			Map: clientMapping,
			Ev:  chunkEvents,
		},
		{
			Name:  "semconv",
			Layer: LayerClient,
			Match: Match{Any: []Cond{{Attribute: OperationNameKey, AttributeValues: GenerationOperations}}},
			Map: with(clientMapping, func(m *Mapping) {
				m.TTFT = []TimingAttr{{Key: "gen_ai.response.time_to_first_chunk"}}
			}),
			Ev: chunkEvents,
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
