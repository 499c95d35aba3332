// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package promname

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmslo/llmslo/llmsloconnector"
)

// TestNames: the names the built collector's Prometheus exporter shows on
// /metrics (read from a run of dist/otelcol-llmslo; the e2e tests query
// them in a real Prometheus).
func TestNames(t *testing.T) {
	for m, want := range map[llmsloconnector.Metric]string{
		llmsloconnector.MetricSLORequests:   "llm_slo_requests_total",
		llmsloconnector.MetricSLOMet:        "llm_slo_requests_met_total",
		llmsloconnector.MetricSLOViolated:   "llm_slo_requests_violated_total",
		llmsloconnector.MetricSLOUnknown:    "llm_slo_requests_unknown_total",
		llmsloconnector.MetricSLOTokensMet:  "llm_slo_output_tokens_met_total",
		llmsloconnector.MetricSLOViolations: "llm_slo_violations_total",
		llmsloconnector.MetricSLOGoodput:    "llm_slo_goodput_ratio",
	} {
		assert.Equal(t, want, Metric(m))
	}
	for _, c := range []struct {
		l     llmsloconnector.Latency
		layer string
		want  string
	}{
		{llmsloconnector.LatencyTTFT, "server", "gen_ai_server_time_to_first_token_seconds"},
		{llmsloconnector.LatencyTTFT, "client", "gen_ai_client_operation_time_to_first_chunk_seconds"},
		{llmsloconnector.LatencyTPOT, "server", "gen_ai_server_time_per_output_token_seconds"},
		{llmsloconnector.LatencyTPOT, "client", "llm_client_time_per_output_token_seconds"},
		{llmsloconnector.LatencyITL, "client", "gen_ai_client_operation_time_per_output_chunk_seconds"},
		{llmsloconnector.LatencyITL, "server", "llm_server_inter_token_latency_seconds"},
		{llmsloconnector.LatencyE2E, "server", "llm_e2e_seconds"},
		{llmsloconnector.LatencyDuration, "server", "gen_ai_server_request_duration_seconds"},
		{llmsloconnector.LatencyQueue, "server", "llm_queue_time_seconds"},
	} {
		m, ok := llmsloconnector.LatencyHistogram(c.l, c.layer)
		require.True(t, ok)
		assert.Equal(t, c.want, Metric(m))
	}
	assert.Equal(t, "llm_slo_name", Label(llmsloconnector.AttrSLOName))
	assert.Equal(t, "collector_instance_id", Label(llmsloconnector.AttrCollectorInstance))
	assert.Equal(t, "gen_ai_request_model", Label(llmsloconnector.AttrRequestModel))
	assert.Equal(t, "llm_layer", Label("llm.layer"))
	assert.Equal(t, "key_0a", Label("0a"))
	assert.Equal(t, "x_seconds", Metric(llmsloconnector.Metric{Name: "x.seconds", Unit: "s", Type: llmsloconnector.MetricTypeHistogram}))
}
