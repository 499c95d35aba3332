// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
	"context"

	"go.opentelemetry.io/otel/metric"

	"github.com/llmslo/llmslo/internal/metadata"
)

// telemetry is the connector's own metrics; metadata.yaml and
// documentation.md describe them.
type telemetry struct {
	skipped         metric.Int64Counter
	rejected        metric.Int64Counter
	overflow        metric.Int64Counter
	verdictsIgnored metric.Int64Counter
	labelsRepaired  metric.Int64Counter
	labelsTruncated metric.Int64Counter
	tracestate      metric.Int64Counter
}

// telemetryDefs are the name, unit and description of each counter.
var telemetryDefs = struct {
	skipped, rejected, overflow, verdictsIgnored, labelsRepaired, labelsTruncated, tracestate metricDef
}{
	skipped: metricDef{"otelcol_connector_llm_slo_spans_skipped", "{span}",
		"Spans without the llm_slo processor's attributes (not LLM requests, or the processor is not in front of the connector)."},
	rejected: metricDef{"otelcol_connector_llm_slo_values_rejected", "{value}",
		"Attribute values kept out of the metrics: negative, non-finite, beyond the processor's limits, of the wrong type, or not a constraint name or cause."},
	overflow: metricDef{"otelcol_connector_llm_slo_overflow", "{span}",
		"Spans counted in the overflow series because the cardinality limit was reached."},
	verdictsIgnored: metricDef{"otelcol_connector_llm_slo_verdicts_ignored", "{verdict}",
		"SLO verdicts under names no llm_slo processor of this collector judges (forged, or from another configuration)."},
	labelsRepaired: metricDef{"otelcol_connector_llm_slo_labels_repaired", "{value}",
		"Label values whose invalid UTF-8 was replaced with U+FFFD."},
	labelsTruncated: metricDef{"otelcol_connector_llm_slo_labels_truncated", "{value}",
		"Label values cut to attribute_value_length_limit bytes."},
	tracestate: metricDef{"otelcol_connector_llm_slo_tracestate_malformed", "{span}",
		"Spans whose tracestate sampling threshold (ot=th) could not be read or is below one in 2^20, counted as one request each (sampling_adjusted_counts)."},
}

func newTelemetry(mp metric.MeterProvider) (*telemetry, error) {
	m := mp.Meter(metadata.ConnectorScopeName)
	t := &telemetry{}
	for _, x := range []struct {
		c   *metric.Int64Counter
		def metricDef
	}{
		{&t.skipped, telemetryDefs.skipped},
		{&t.rejected, telemetryDefs.rejected},
		{&t.overflow, telemetryDefs.overflow},
		{&t.verdictsIgnored, telemetryDefs.verdictsIgnored},
		{&t.labelsRepaired, telemetryDefs.labelsRepaired},
		{&t.labelsTruncated, telemetryDefs.labelsTruncated},
		{&t.tracestate, telemetryDefs.tracestate},
	} {
		var err error
		if *x.c, err = m.Int64Counter(x.def.name, metric.WithDescription(x.def.desc), metric.WithUnit(x.def.unit)); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// record adds one batch's counts.
func (t *telemetry) record(ctx context.Context, skipped int64, sc *scratch) {
	for _, x := range []struct {
		c metric.Int64Counter
		n int64
	}{
		{t.skipped, skipped},
		{t.rejected, sc.rejected},
		{t.overflow, sc.overflowed},
		{t.verdictsIgnored, sc.ignored},
		{t.labelsRepaired, sc.labels.repaired},
		{t.labelsTruncated, sc.labels.truncated},
		{t.tracestate, sc.malformedTracestate},
	} {
		if x.n > 0 {
			x.c.Add(ctx, x.n)
		}
	}
}
