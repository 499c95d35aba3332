// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

// Package catalog names the metrics the llm_slo connector emits and their
// data point attributes. It is the one owner of those names: the connector
// emits them, and the llmslo command's recording rules, alerts and
// dashboard query them, so both read them from here (as contrib's
// spanmetrics keeps its metric plumbing in an internal package beside the
// component). The connector's TestExportedMetrics checks every entry
// against what it emits.
package catalog

import (
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/llmslo/llmslo/internal/contract"
)

// Type is the OTLP type of a metric.
type Type uint8

const (
	// Counter is a monotonic cumulative (or delta) sum.
	Counter Type = iota
	// Gauge is a gauge.
	Gauge
	// Histogram is an exponential (default) or explicit-bucket histogram.
	Histogram
)

// Metric is one metric as the connector emits it over OTLP.
type Metric struct {
	Name string
	Unit string // UCUM, as on the OTLP metric
	Type Type
}

// Units.
const (
	UnitSeconds   = "s"
	UnitTokens    = "{token}"
	UnitRequests  = "{request}"
	UnitViolation = "{violation}"
	UnitRatio     = "1"
	UnitSpans     = "{span}"
)

// The SLO metrics; every data point carries AttrSLOName.
var (
	SLORequests   = Metric{"llm.slo.requests", UnitRequests, Counter}
	SLOMet        = Metric{"llm.slo.requests.met", UnitRequests, Counter}
	SLOViolated   = Metric{"llm.slo.requests.violated", UnitRequests, Counter}
	SLOUnknown    = Metric{"llm.slo.requests.unknown", UnitRequests, Counter}
	SLOTokensMet  = Metric{"llm.slo.output_tokens.met", UnitTokens, Counter}
	SLOViolations = Metric{"llm.slo.violations", UnitViolation, Counter} // with AttrSLOConstraint, and AttrSLOCause for a latency constraint whose cause the span named
	SLOGoodput    = Metric{"llm.slo.goodput", UnitRatio, Gauge}
	// SLOWeighted counts the requests of SLORequests that came from spans
	// standing for more than one request (a sampler's adjusted count above
	// 1); SLOWeightedSpans counts those spans. Their ratio to SLORequests is
	// the share of an SLO's counts that rests on the senders' sampling word.
	SLOWeighted      = Metric{"llm.slo.requests.weighted", UnitRequests, Counter}
	SLOWeightedSpans = Metric{"llm.slo.weighted_spans", UnitSpans, Counter}
	// SLOPressure is a window quantile over a threshold, with AttrSLOConstraint.
	SLOPressure = Metric{"llm.slo.pressure", UnitRatio, Gauge}
)

// Layer indexes, in the order of Layers.
const (
	LayerServer = iota
	LayerClient
	NumLayers
)

// Layers are the values of the layer dimension, by layer index.
var Layers = []string{LayerServer: contract.LayerServer, LayerClient: contract.LayerClient}

// Latency names a latency distribution.
type Latency uint8

const (
	LatencyTTFT Latency = iota
	LatencyTPOT
	LatencyITL
	LatencyE2E
	LatencyDuration
	LatencyQueue
	NumLatencies
)

// latencyNames are the histogram names (metric_names v1.41, the default)
// by latency and layer: the conventions' where they name one, else llm.*.
var latencyNames = [NumLatencies][NumLayers]string{
	LatencyTTFT:     {"gen_ai.server.time_to_first_token", "gen_ai.client.operation.time_to_first_chunk"},
	LatencyTPOT:     {"gen_ai.server.time_per_output_token", "llm.client.time_per_output_token"},
	LatencyITL:      {"llm.server.inter_token_latency", "gen_ai.client.operation.time_per_output_chunk"},
	LatencyE2E:      {"llm.e2e", "llm.e2e"},
	LatencyDuration: {"gen_ai.server.request.duration", "gen_ai.client.operation.duration"},
	LatencyQueue:    {"llm.queue_time", "llm.queue_time"},
}

// LatencyNames are latency l's histogram names by layer index.
func LatencyNames(l Latency) [NumLayers]string { return latencyNames[l] }

// TokenUsageNames are the token histogram's names by layer index (one
// histogram for input and output, told apart by AttrTokenType).
var TokenUsageNames = [NumLayers]string{"llm.server.token.usage", "gen_ai.client.token.usage"}

// LatencyHistogram is the histogram (unit s) of latency l at layer
// ("server" or "client"); ok is false for another layer.
func LatencyHistogram(l Latency, layer string) (m Metric, ok bool) {
	for i, name := range Layers {
		if name == layer && l < NumLatencies {
			return Metric{latencyNames[l][i], UnitSeconds, Histogram}, true
		}
	}
	return Metric{}, false
}

// Data point attributes. The layer dimension is the processor's
// attribute_prefix + contract.SuffixLayer ("llm.layer").
const (
	AttrSLOName           = "llm.slo.name"
	AttrSLOConstraint     = "llm.slo.constraint"
	AttrSLOCause          = "llm.slo.cause"                      // one of contract.CauseNames; absent on error, <constraint>:unknown and a failed constraint without a cause
	AttrRequestModel      = string(semconv.GenAIRequestModelKey) // the processor's llm.model
	AttrCollectorInstance = "collector.instance.id"
	AttrQuantile          = "quantile"
	AttrTokenType         = string(semconv.GenAITokenTypeKey)
	AttrOverflow          = "otel.metric.overflow"
	// AttrInputClass is the span's input-token class (le_<bound>,
	// gt_<last bound> or unknown), only with the connector's
	// input_token_classes set.
	AttrInputClass = "llm.input_class"
)
