package llmsloconnector

// Metric names live here and nowhere else: the GenAI conventions are still
// renaming their client metrics (gen_ai.client.inference.*), and a switch
// must be one change. Names follow the conventions (v1.41) where a name
// exists, by layer; the rest are in the llm. namespace.

// histKind is a distribution the connector records.
type histKind uint8

const (
	histTTFT histKind = iota
	histTPOT
	histITL
	histDuration
	histE2E
	histQueue
	histInputTokens
	histOutputTokens
	numHistKinds
)

type layerIndex uint8

const (
	layerServer layerIndex = iota
	layerClient
	numLayers
)

var layerNames = [numLayers]string{"server", "client"}

// histNames[kind][layer].
var histNames = [numHistKinds][numLayers]string{
	histTTFT:         {"gen_ai.server.time_to_first_token", "gen_ai.client.operation.time_to_first_chunk"},
	histTPOT:         {"gen_ai.server.time_per_output_token", "llm.client.time_per_output_token"},
	histITL:          {"llm.server.inter_token_latency", "gen_ai.client.operation.time_per_output_chunk"},
	histDuration:     {"gen_ai.server.request.duration", "gen_ai.client.operation.duration"},
	histE2E:          {"llm.e2e", "llm.e2e"},
	histQueue:        {"llm.queue_time", "llm.queue_time"},
	histInputTokens:  {"llm.server.token.usage", "gen_ai.client.token.usage"},
	histOutputTokens: {"llm.server.token.usage", "gen_ai.client.token.usage"},
}

var histDescriptions = [numHistKinds]string{
	histTTFT:         "Time to first token (server) or first chunk (client) of each LLM request.",
	histTPOT:         "Time per output token after the first, (E2E - TTFT)/(N - 1), of each LLM request with N >= 2.",
	histITL:          "Every inter-token (inter-chunk) gap of each streamed LLM request.",
	histDuration:     "Span duration of each LLM request, as the semantic conventions define it.",
	histE2E:          "Request start to last output token of each LLM request.",
	histQueue:        "Time each LLM request waited in the engine's queue.",
	histInputTokens:  "Input and output tokens of each LLM request (gen_ai.token.type).",
	histOutputTokens: "Input and output tokens of each LLM request (gen_ai.token.type).",
}

// tokenType is the gen_ai.token.type of the two token histograms, which
// share a metric name.
var tokenType = map[histKind]string{histInputTokens: "input", histOutputTokens: "output"}

// bucketKinds name the explicit-bucket defaults a user can override.
var bucketKinds = []string{"ttft", "tpot", "itl", "duration", "tokens"}

var histBucketKind = [numHistKinds]string{
	histTTFT: "ttft", histTPOT: "tpot", histITL: "itl", histDuration: "duration",
	histE2E: "duration", histQueue: "duration", histInputTokens: "tokens", histOutputTokens: "tokens",
}

// defaultBuckets are the conventions' recommended boundaries, extended to
// cover minutes-long requests (vLLM's own TTFT buckets reach 2,560 s) and,
// for TPOT and ITL, below 10 ms, where fast models decode.
var defaultBuckets = map[string][]float64{
	"ttft": {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20, 40, 80, 160, 320},
	"tpot": {0.001, 0.0025, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5, 10},
	"itl":  {0.001, 0.0025, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5, 10},
	"duration": {0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
		163.84, 327.68, 655.36},
	"tokens": {1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864},
}

// The default dimensions, as data point attributes (llm.layer, the fourth,
// is the processor's key under attribute_prefix).
const (
	attrRequestModel  = "gen_ai.request.model"  // from llm.model, else gen_ai.response.model, else gen_ai.request.model
	attrProviderName  = "gen_ai.provider.name"  // else gen_ai.system
	attrOperationName = "gen_ai.operation.name" // as the span has it
)

// builtinDimensions cannot be configured again as dimensions.
var builtinDimensions = []string{attrRequestModel, attrProviderName, attrOperationName, attrCollectorInstance}

// Goodput counters and window gauges, all with llm.slo.name.
const (
	metricSLORequests     = "llm.slo.requests"
	metricSLOMet          = "llm.slo.requests.met"
	metricSLOViolated     = "llm.slo.requests.violated"
	metricSLOUnknown      = "llm.slo.requests.unknown"
	metricSLOTokensMet    = "llm.slo.output_tokens.met"
	metricSLOViolations   = "llm.slo.violations"
	metricSLOGoodput      = "llm.slo.goodput"
	attrSLOName           = "llm.slo.name"
	attrSLOConstraint     = "llm.slo.constraint"
	attrQuantile          = "quantile"
	attrTokenType         = "gen_ai.token.type"
	attrOverflow          = "otel.metric.overflow"
	attrCollectorInstance = "collector.instance.id"
)

// windowKind is a distribution with windowed percentile gauges.
type windowKind uint8

const (
	windowTTFT windowKind = iota
	windowTPOT
	windowITL
	windowE2E
	numWindowKinds
)

var windowNames = [numWindowKinds]string{"llm.ttft.window", "llm.tpot.window", "llm.itl.window", "llm.e2e.window"}
