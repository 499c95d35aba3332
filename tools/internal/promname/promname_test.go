// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package promname

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmslo/llmslo/internal/catalog"
)

// TestNames: the names the built collector's Prometheus exporter shows on
// /metrics (read from a run of dist/otelcol-llmslo; the e2e tests query
// them in a real Prometheus).
func TestNames(t *testing.T) {
	for m, want := range map[catalog.Metric]string{
		catalog.SLORequests:      "llm_slo_requests_total",
		catalog.SLOMet:           "llm_slo_requests_met_total",
		catalog.SLOViolated:      "llm_slo_requests_violated_total",
		catalog.SLOUnknown:       "llm_slo_requests_unknown_total",
		catalog.SLOTokensMet:     "llm_slo_output_tokens_met_total",
		catalog.SLOViolations:    "llm_slo_violations_total",
		catalog.SLOGoodput:       "llm_slo_goodput_ratio",
		catalog.SLOPressure:      "llm_slo_pressure_ratio",
		catalog.SLOWeighted:      "llm_slo_requests_weighted_total",
		catalog.SLOWeightedSpans: "llm_slo_weighted_spans_total",
	} {
		assert.Equal(t, want, Metric(m))
	}
	for _, c := range []struct {
		l     catalog.Latency
		layer string
		want  string
	}{
		{catalog.LatencyTTFT, "server", "gen_ai_server_time_to_first_token_seconds"},
		{catalog.LatencyTTFT, "client", "gen_ai_client_operation_time_to_first_chunk_seconds"},
		{catalog.LatencyTPOT, "server", "gen_ai_server_time_per_output_token_seconds"},
		{catalog.LatencyTPOT, "client", "llm_client_time_per_output_token_seconds"},
		{catalog.LatencyITL, "client", "gen_ai_client_operation_time_per_output_chunk_seconds"},
		{catalog.LatencyITL, "server", "llm_server_inter_token_latency_seconds"},
		{catalog.LatencyE2E, "server", "llm_e2e_seconds"},
		{catalog.LatencyDuration, "server", "gen_ai_server_request_duration_seconds"},
		{catalog.LatencyQueue, "server", "llm_queue_time_seconds"},
	} {
		m, ok := catalog.LatencyHistogram(c.l, c.layer)
		require.True(t, ok)
		assert.Equal(t, c.want, Metric(m))
	}
	assert.Equal(t, []string{"llm_slo_requests_total", "llm_slo_requests_met_total", "llm_slo_requests_violated_total",
		"llm_slo_requests_unknown_total", "llm_slo_output_tokens_met_total", "llm_slo_violations_total", "llm_slo_name", "llm_slo_constraint"},
		[]string{SLORequests, SLOMet, SLOViolated, SLOUnknown, SLOTokensMet, SLOViolations, LabelSLOName, LabelSLOConstraint})
	assert.Equal(t, "llm_slo_name", Label(catalog.AttrSLOName))
	assert.Equal(t, "collector_instance_id", Label(catalog.AttrCollectorInstance))
	assert.Equal(t, "gen_ai_request_model", Label(catalog.AttrRequestModel))
	assert.Equal(t, "llm_layer", Label("llm.layer"))
	assert.Equal(t, "key_0a", Label("0a"))
	assert.Equal(t, "x_seconds", Metric(catalog.Metric{Name: "x.seconds", Unit: "s", Type: catalog.Histogram}))
}
