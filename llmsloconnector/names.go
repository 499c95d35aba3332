// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/llmslo/llmslo/internal/contract"
)

// Metric names, units and descriptions live here and nowhere else: the
// GenAI conventions are still renaming their client metrics
// (gen_ai.client.inference.*), and a switch must be one change. Names follow
// the conventions (v1.41) where a name exists, by layer; the rest are in the
// llm. namespace.

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

// layerNames are the llm.layer values, by layerIndex.
var layerNames = [numLayers]string{contract.LayerServer, contract.LayerClient}

// Units.
const (
	unitSeconds   = "s"
	unitTokens    = "{token}"
	unitRequests  = "{request}"
	unitViolation = "{violation}"
	unitRatio     = "1"
)

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

func histUnit(k histKind) string {
	if k == histInputTokens || k == histOutputTokens {
		return unitTokens
	}
	return unitSeconds
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

// Span attributes the connector reads besides the processor's own (those
// are in internal/contract): the conventions' names of the default
// dimensions.
const (
	keyProviderName  = string(semconv.GenAIProviderNameKey)
	keyOperationName = string(semconv.GenAIOperationNameKey)
	// keySystem is gen_ai.provider.name's name before semconv v1.37; older
	// instrumentations still write it.
	keySystem = "gen_ai.system"
	// keyServiceName is the default resource dimension.
	keyServiceName = string(semconv.ServiceNameKey)
)

// The default dimensions, as data point attributes (llm.layer, the fourth,
// is the processor's key under its attribute prefix).
const (
	attrRequestModel  = string(semconv.GenAIRequestModelKey) // the processor's llm.model
	attrProviderName  = keyProviderName                      // else gen_ai.system
	attrOperationName = keyOperationName                     // as the span has it
)

// builtinDimensions cannot be configured again as dimensions.
var builtinDimensions = []string{attrRequestModel, attrProviderName, attrOperationName, attrCollectorInstance}

// Data point attributes beside the dimensions.
const (
	attrSLOName           = "llm.slo.name"
	attrSLOConstraint     = "llm.slo.constraint"
	attrQuantile          = "quantile"
	attrTokenType         = string(semconv.GenAITokenTypeKey)
	attrOverflow          = "otel.metric.overflow"
	attrCollectorInstance = "collector.instance.id"
)

// metricDef is the name, unit and description of one metric.
type metricDef struct{ name, unit, desc string }

// The goodput counters, all with llm.slo.name.
var (
	metricSLORequests   = metricDef{"llm.slo.requests", unitRequests, "LLM requests an SLO selected (met + violated + unknown)."}
	metricSLOMet        = metricDef{"llm.slo.requests.met", unitRequests, "LLM requests that met every constraint of the SLO at once."}
	metricSLOViolated   = metricDef{"llm.slo.requests.violated", unitRequests, "LLM requests that failed at least one constraint of the SLO, or failed."}
	metricSLOUnknown    = metricDef{"llm.slo.requests.unknown", unitRequests, "LLM requests whose SLO verdict could not be decided (a value was missing); never counted as met."}
	metricSLOTokensMet  = metricDef{"llm.slo.output_tokens.met", unitTokens, "Output tokens of the LLM requests that met the SLO (token goodput)."}
	metricSLOViolations = metricDef{"llm.slo.violations", unitViolation, "SLO constraints failed or undecidable, by constraint (ttft, tpot, itl, e2e, queue_time, error, or <constraint>:unknown)."}
	metricSLOGoodput    = metricDef{"llm.slo.goodput", unitRatio, "Share of the LLM requests an SLO selected that met it, over the sliding window (per collector replica)."}
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

// windowHist is the histogram each window shadows.
var windowHist = [numWindowKinds]histKind{histTTFT, histTPOT, histITL, histE2E}

var windowNames = [numWindowKinds]string{"llm.ttft.window", "llm.tpot.window", "llm.itl.window", "llm.e2e.window"}

const windowDescription = "Percentile over the sliding window (per collector replica; not mergeable across replicas: use the histograms for that)."
