// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

// The metrics the connector emits, exported for the llmslo command
// (recording rules, alerts, dashboard), which must query the very names the
// connector writes. The names come from names.go; TestExportedMetrics checks
// name, unit and type against what the connector emits.

// MetricType is the OTLP type of a metric the connector emits.
type MetricType uint8

const (
	// MetricTypeCounter is a monotonic cumulative (or delta) sum.
	MetricTypeCounter MetricType = iota
	// MetricTypeGauge is a gauge.
	MetricTypeGauge
	// MetricTypeHistogram is an exponential (default) or explicit-bucket
	// histogram.
	MetricTypeHistogram
)

// Metric is one metric as the connector emits it over OTLP.
type Metric struct {
	Name string
	Unit string // UCUM, as on the OTLP metric
	Type MetricType
}

// The SLO metrics; every data point carries AttrSLOName.
var (
	MetricSLORequests   = Metric{metricSLORequests.name, metricSLORequests.unit, MetricTypeCounter}
	MetricSLOMet        = Metric{metricSLOMet.name, metricSLOMet.unit, MetricTypeCounter}
	MetricSLOViolated   = Metric{metricSLOViolated.name, metricSLOViolated.unit, MetricTypeCounter}
	MetricSLOUnknown    = Metric{metricSLOUnknown.name, metricSLOUnknown.unit, MetricTypeCounter}
	MetricSLOTokensMet  = Metric{metricSLOTokensMet.name, metricSLOTokensMet.unit, MetricTypeCounter}
	MetricSLOViolations = Metric{metricSLOViolations.name, metricSLOViolations.unit, MetricTypeCounter} // with AttrSLOConstraint
	MetricSLOGoodput    = Metric{metricSLOGoodput.name, metricSLOGoodput.unit, MetricTypeGauge}
)

// Layers are the values of the layer dimension, "server" and "client".
var Layers = layerNames[:]

// Latency names a latency distribution for LatencyHistogram.
type Latency uint8

const (
	LatencyTTFT Latency = iota
	LatencyTPOT
	LatencyITL
	LatencyE2E
	LatencyDuration
	LatencyQueue
)

var latencyKinds = [...]histKind{
	LatencyTTFT: histTTFT, LatencyTPOT: histTPOT, LatencyITL: histITL,
	LatencyE2E: histE2E, LatencyDuration: histDuration, LatencyQueue: histQueue,
}

// LatencyHistogram is the histogram (unit s) of latency l at layer
// ("server" or "client"); ok is false for another layer.
func LatencyHistogram(l Latency, layer string) (m Metric, ok bool) {
	for i, name := range layerNames {
		if name == layer && int(l) < len(latencyKinds) {
			return Metric{histNames[latencyKinds[l]][i], unitSeconds, MetricTypeHistogram}, true
		}
	}
	return Metric{}, false
}

// Data point attributes of the connector's metrics. The layer dimension is
// the processor's attribute_prefix + contract.SuffixLayer ("llm.layer").
const (
	AttrSLOName           = attrSLOName
	AttrSLOConstraint     = attrSLOConstraint
	AttrRequestModel      = attrRequestModel
	AttrCollectorInstance = attrCollectorInstance
	AttrQuantile          = attrQuantile
)
