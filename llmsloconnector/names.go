// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/llmslo/llmslo/internal/catalog"
	"github.com/llmslo/llmslo/llmsloconnector/internal/series"
)

// The names of the metrics queried from outside (the SLO counters, the
// latency histograms, their attributes) are internal/catalog's, shared with
// the llmslo command; the descriptions, the next convention version's
// names and the explicit buckets are the connector's own, here. The GenAI
// conventions are still renaming their client metrics
// (gen_ai.client.inference.*), and a switch must be one change.

// The kinds of distribution, layer, window and token counter are the
// series package's, which records them; these short names keep the tables
// below and the span reading readable.
type (
	histKind   = series.Hist
	layerIndex = series.Layer
	windowKind = series.Window
	usageKind  = series.Usage
)

const (
	histTTFT         = series.HistTTFT
	histTPOT         = series.HistTPOT
	histITL          = series.HistITL
	histDuration     = series.HistDuration
	histE2E          = series.HistE2E
	histQueue        = series.HistQueue
	histInputTokens  = series.HistInputTokens
	histOutputTokens = series.HistOutputTokens
	numHistKinds     = series.NumHists

	layerServer = series.LayerServer
	layerClient = series.LayerClient
	numLayers   = series.NumLayers

	windowTTFT     = series.WindowTTFT
	windowTPOT     = series.WindowTPOT
	windowITL      = series.WindowITL
	windowE2E      = series.WindowE2E
	numWindowKinds = series.NumWindows

	usageInput      = series.UsageInput
	usageOutput     = series.UsageOutput
	usageCacheRead  = series.UsageCacheRead
	usageCacheWrite = series.UsageCacheWrite
	usageReasoning  = series.UsageReasoning
	numUsageKinds   = series.NumUsage
)

// layerNames are the llm.layer values, by layerIndex.
var layerNames = series.LayerNames

// windowSlots is the number of steps the sliding windows advance in.
const windowSlots = series.WindowSlots

// Units.
const (
	unitSeconds   = catalog.UnitSeconds
	unitTokens    = catalog.UnitTokens
	unitRequests  = catalog.UnitRequests
	unitViolation = catalog.UnitViolation
	unitRatio     = catalog.UnitRatio
)

// histNames[kind][layer], the catalogue's.
var histNames = [numHistKinds][numLayers]string{
	histTTFT:         catalog.LatencyNames(catalog.LatencyTTFT),
	histTPOT:         catalog.LatencyNames(catalog.LatencyTPOT),
	histITL:          catalog.LatencyNames(catalog.LatencyITL),
	histDuration:     catalog.LatencyNames(catalog.LatencyDuration),
	histE2E:          catalog.LatencyNames(catalog.LatencyE2E),
	histQueue:        catalog.LatencyNames(catalog.LatencyQueue),
	histInputTokens:  catalog.TokenUsageNames,
	histOutputTokens: catalog.TokenUsageNames,
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
	attrRequestModel  = catalog.AttrRequestModel // the processor's llm.model
	attrProviderName  = keyProviderName          // else gen_ai.system
	attrOperationName = keyOperationName         // as the span has it
)

// builtinDimensions cannot be configured again as dimensions.
var builtinDimensions = []string{attrRequestModel, attrProviderName, attrOperationName, attrCollectorInstance}

// Data point attributes beside the dimensions.
const (
	attrSLOName           = catalog.AttrSLOName
	attrSLOConstraint     = catalog.AttrSLOConstraint
	attrSLOCause          = catalog.AttrSLOCause
	attrQuantile          = catalog.AttrQuantile
	attrTokenType         = catalog.AttrTokenType
	attrOverflow          = catalog.AttrOverflow
	attrCollectorInstance = catalog.AttrCollectorInstance
	attrInputClass        = catalog.AttrInputClass
)

// metricDef is the name, unit and description of one metric.
type metricDef struct{ name, unit, desc string }

// The goodput counters, all with llm.slo.name.
var (
	metricSLORequests      = metricDef{catalog.SLORequests.Name, catalog.SLORequests.Unit, "LLM requests an SLO selected (met + violated + unknown)."}
	metricSLOMet           = metricDef{catalog.SLOMet.Name, catalog.SLOMet.Unit, "LLM requests that met every constraint of the SLO at once."}
	metricSLOViolated      = metricDef{catalog.SLOViolated.Name, catalog.SLOViolated.Unit, "LLM requests that failed at least one constraint of the SLO, or failed."}
	metricSLOUnknown       = metricDef{catalog.SLOUnknown.Name, catalog.SLOUnknown.Unit, "LLM requests whose SLO verdict could not be decided (a value was missing); never counted as met."}
	metricSLOTokensMet     = metricDef{catalog.SLOTokensMet.Name, catalog.SLOTokensMet.Unit, "Output tokens of the LLM requests that met the SLO (token goodput)."}
	metricSLOViolations    = metricDef{catalog.SLOViolations.Name, catalog.SLOViolations.Unit, "SLO constraints failed or undecidable, by constraint (ttft, tpot, itl, e2e, queue_time, error, or <constraint>:unknown) and, for a failed constraint, cause (llm.slo.cause)."}
	metricSLOWeighted      = metricDef{catalog.SLOWeighted.Name, catalog.SLOWeighted.Unit, "LLM requests an SLO selected that were counted from spans standing for more than one request (sampled spans' adjusted counts above 1; bounded by max_adjusted_count)."}
	metricSLOWeightedSpans = metricDef{catalog.SLOWeightedSpans.Name, catalog.SLOWeightedSpans.Unit, "Spans an SLO selected that stood for more than one request (adjusted count above 1)."}
	metricSLOGoodput       = metricDef{catalog.SLOGoodput.Name, catalog.SLOGoodput.Unit, "Share of the LLM requests an SLO selected that met it (of its decidable requests, met + violated, when unknown_verdicts is exclude), over the sliding window (per collector replica)."}
)

var windowNames = [numWindowKinds]string{"llm.ttft.window", "llm.tpot.window", "llm.itl.window", "llm.e2e.window"}

const windowDescription = "Percentile over the sliding window (per collector replica; not mergeable across replicas: use the histograms for that)."

// The convention versions of the metric names (metric_names). v1.41 is the
// last released; next is the GenAI conventions' unreleased version after it
// (its migration guide): gen_ai.client.operation.* becomes
// gen_ai.client.inference.*, and gen_ai.client.token.usage (one histogram
// split by gen_ai.token.type) becomes two histograms and five counters.
const (
	metricNamesV141 = "v1.41"
	metricNamesNext = "next"
)

// metricNamesValues are the allowed metric_names, the default first.
var metricNamesValues = []string{metricNamesV141, metricNamesNext}

// metricNames is one convention version's names of the distributions and
// token counters; the SLO and window metrics are the same in every version.
type metricNames struct {
	hist [numHistKinds][numLayers]string
	desc [numHistKinds]string
	// tokenType: the two token histograms share a name, told apart by
	// gen_ai.token.type.
	tokenType bool
	// usage are the token counters; empty names are not emitted.
	usage     [numUsageKinds][numLayers]string
	usageDesc [numUsageKinds]string
}

var namesV141 = metricNames{hist: histNames, desc: histDescriptions, tokenType: true}

// namesNext renames the client distributions and splits the token
// histograms. The server layer has no conventions' token metrics: its
// histograms and counters take the client's shape in the llm.server.
// namespace, so one query serves both layers with the prefix swapped.
var namesNext = metricNames{
	hist: func() [numHistKinds][numLayers]string {
		h := histNames
		h[histTTFT][layerClient] = "gen_ai.client.inference.time_to_first_chunk"
		h[histITL][layerClient] = "gen_ai.client.inference.time_per_output_chunk"
		h[histDuration][layerClient] = "gen_ai.client.inference.duration"
		h[histInputTokens] = [numLayers]string{"llm.server.inference.operation.input_tokens", "gen_ai.client.inference.operation.input_tokens"}
		h[histOutputTokens] = [numLayers]string{"llm.server.inference.operation.output_tokens", "gen_ai.client.inference.operation.output_tokens"}
		return h
	}(),
	desc: func() [numHistKinds]string {
		d := histDescriptions
		d[histInputTokens] = "Input tokens of each LLM request."
		d[histOutputTokens] = "Output tokens of each LLM request."
		return d
	}(),
	usage: [numUsageKinds][numLayers]string{
		usageInput:      {"llm.server.inference.usage.input_tokens", "gen_ai.client.inference.usage.input_tokens"},
		usageOutput:     {"llm.server.inference.usage.output_tokens", "gen_ai.client.inference.usage.output_tokens"},
		usageCacheRead:  {"llm.server.inference.usage.cache_read.input_tokens", "gen_ai.client.inference.usage.cache_read.input_tokens"},
		usageCacheWrite: {"llm.server.inference.usage.cache_write.input_tokens", "gen_ai.client.inference.usage.cache_write.input_tokens"},
		usageReasoning:  {"llm.server.inference.usage.reasoning.output_tokens", "gen_ai.client.inference.usage.reasoning.output_tokens"},
	},
	usageDesc: [numUsageKinds]string{
		usageInput:      "Input tokens of the successful LLM requests.",
		usageOutput:     "Output tokens of the successful LLM requests.",
		usageCacheRead:  "Input tokens served from the provider's prompt cache (among the input tokens), where the producer reports them.",
		usageCacheWrite: "Input tokens written to the provider's prompt cache (among the input tokens), where the producer reports them.",
		usageReasoning:  "Reasoning tokens (among the output tokens), where the producer reports them.",
	},
}

// metricNameSets are the name sets by metric_names value.
var metricNameSets = map[string]*metricNames{metricNamesV141: &namesV141, metricNamesNext: &namesNext}

// histDef is the name, unit and description of histogram k at layer l.
func (n *metricNames) histDef(k histKind, l layerIndex) metricDef {
	return metricDef{n.hist[k][l], histUnit(k), n.desc[k]}
}

// counters reports whether the set has token counters.
func (n *metricNames) counters() bool { return n.usage[usageInput][layerClient] != "" }

// usageDef is the name, unit and description of counter u at layer l.
func (n *metricNames) usageDef(u usageKind, l layerIndex) metricDef {
	return metricDef{n.usage[u][l], unitTokens, n.usageDesc[u]}
}

// output is what a flush of this name set writes, with the connector's
// percentiles and pressure settings.
func (n *metricNames) output(cfg *Config) *series.Output {
	out := &series.Names{
		Requests: metricSLORequests.def(), Met: metricSLOMet.def(), Violated: metricSLOViolated.def(),
		Unknown: metricSLOUnknown.def(), TokensMet: metricSLOTokensMet.def(), Weighted: metricSLOWeighted.def(),
		WeightedSpans: metricSLOWeightedSpans.def(), Violations: metricSLOViolations.def(),
		Goodput: metricSLOGoodput.def(), Pressure: metricSLOPressure.def(),
	}
	for k := range numHistKinds {
		for l := range layerIndex(numLayers) {
			out.Hist[k][l] = n.histDef(k, l).def()
		}
		if tt, ok := tokenType[k]; ok && n.tokenType {
			out.TokenType[k] = tt
		}
	}
	for u := range numUsageKinds {
		for l := range layerIndex(numLayers) {
			out.Usage[u][l] = n.usageDef(u, l).def()
		}
	}
	for w := range numWindowKinds {
		out.Window[w] = metricDef{windowNames[w], unitSeconds, windowDescription}.def()
	}
	return &series.Output{Names: out, Delta: cfg.AggregationTemporality == temporalityDelta, Percentiles: cfg.Percentiles,
		PressureQuantile: cfg.Pressure.Quantile, PressureMinRequests: cfg.Pressure.MinRequests}
}

func (d metricDef) def() series.Def { return series.Def{Name: d.name, Unit: d.unit, Desc: d.desc} }
