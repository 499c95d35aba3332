package llmsloconnector

import (
	"go.opentelemetry.io/otel/metric"

	"github.com/llmslo/llmslo/internal/metadata"
)

// telemetry is the connector's own metrics.
type telemetry struct {
	skipped  metric.Int64Counter
	rejected metric.Int64Counter
	overflow metric.Int64Counter
}

func newTelemetry(mp metric.MeterProvider) (*telemetry, error) {
	m := mp.Meter(metadata.ConnectorScopeName)
	t := &telemetry{}
	var err error
	if t.skipped, err = m.Int64Counter("otelcol_connector_llm_slo_spans_skipped",
		metric.WithDescription("Spans without the llm_slo processor's attributes (not LLM requests, or the processor is not in front of the connector)."),
		metric.WithUnit("{span}")); err != nil {
		return nil, err
	}
	if t.rejected, err = m.Int64Counter("otelcol_connector_llm_slo_values_rejected",
		metric.WithDescription("Attribute values kept out of the histograms: negative, non-finite or of the wrong type."),
		metric.WithUnit("{value}")); err != nil {
		return nil, err
	}
	if t.overflow, err = m.Int64Counter("otelcol_connector_llm_slo_overflow",
		metric.WithDescription("Spans counted in the overflow series because the cardinality limit was reached."),
		metric.WithUnit("{span}")); err != nil {
		return nil, err
	}
	return t, nil
}
