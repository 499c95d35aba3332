// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmslo/llmslo/tools/internal/loadgen"
)

// promExemplar is one exemplar of /api/v1/query_exemplars.
type promExemplar struct {
	Labels map[string]string `json:"labels"`
	Value  string            `json:"value"`
}

// queryExemplars returns every exemplar Prometheus stored for query over
// the last hour.
func queryExemplars(prom, query string) []promExemplar {
	now := time.Now()
	u := fmt.Sprintf("%s/api/v1/query_exemplars?query=%s&start=%d&end=%d", prom, url.QueryEscape(query), now.Add(-time.Hour).Unix(), now.Add(time.Minute).Unix())
	resp, err := http.Get(u)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	var body struct {
		Status string
		Data   []struct {
			Exemplars []promExemplar `json:"exemplars"`
		}
	}
	if json.NewDecoder(resp.Body).Decode(&body) != nil || body.Status != "success" {
		return nil
	}
	var out []promExemplar
	for _, d := range body.Data {
		out = append(out, d.Exemplars...)
	}
	return out
}

// TestExemplarsInPrometheus: the connector's exemplars go through the
// pinned contrib Prometheus exporter (OpenMetrics, which carries exemplars)
// into a real Prometheus with exemplar storage, and the slowest TTFT
// exemplar Prometheus returns is the slowest client request of the run.
// Explicit buckets: Prometheus 2.42 keeps exemplars of classic buckets
// only (see the connector README, Exemplars).
func TestExemplarsInPrometheus(t *testing.T) {
	grpcPort, promExporter := freePort(t), fmt.Sprintf("127.0.0.1:%d", freePort(t))
	startCollector(t, fmt.Sprintf(`
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:%d
processors:
  llm_slo:
    slos:
      - name: interactive
        ttft: 500ms
connectors:
  llm_slo:
    metrics_flush_interval: 5s
    histogram:
      explicit: {}
    exemplars:
      enabled: true
      max_per_data_point: 1
exporters:
  prometheus:
    endpoint: %s
    enable_open_metrics: true
service:
  pipelines:
    traces:
      receivers: [otlp]
      processors: [llm_slo]
      exporters: [llm_slo]
    metrics:
      receivers: [llm_slo]
      exporters: [prometheus]
  telemetry:
    metrics:
      level: none
`, grpcPort, promExporter))
	prom := startPrometheus(t, promExporter, "exemplar-storage")
	// An exemplar lives one flush interval: send the load only once
	// Prometheus scrapes the exporter (its first scrape can come seconds
	// after it is ready), or the one interval that holds the slowest
	// request may pass unscraped.
	require.Eventually(t, func() bool {
		up, ok := query(t, prom, `up{job="llmslo"}`)
		return ok && up == 1
	}, 30*time.Second, 200*time.Millisecond, "Prometheus never scraped the exporter")

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	truths, err := loadgen.Run(ctx, loadgen.Config{
		Endpoint: fmt.Sprintf("127.0.0.1:%d", grpcPort), Rate: 20, Seed: 16, Fast: true, Count: 300, ModelAttr: true,
		Models: map[string]float64{"llama-3.1-8b-instruct": 1, "qwen2.5-1.5b-instruct": 1},
		Shapes: map[loadgen.Shape]float64{loadgen.ShapeChunks: 1, loadgen.ShapeSemconv: 1},
	})
	require.NoError(t, err)
	var slowest *loadgen.Truth
	for i := range truths {
		tr := &truths[i]
		if tr.Layer == "client" && !tr.Error && tr.TTFT != nil && (slowest == nil || *tr.TTFT > *slowest.TTFT) {
			slowest = tr
		}
	}
	require.NotNil(t, slowest)

	var top promExemplar
	require.Eventually(t, func() bool {
		best := -1.0
		for _, e := range queryExemplars(prom, "gen_ai_client_operation_time_to_first_chunk_seconds_bucket") {
			if v, err := strconv.ParseFloat(e.Value, 64); err == nil && v > best {
				best, top = v, e
			}
		}
		return best >= 0
	}, 60*time.Second, time.Second, "Prometheus stored no exemplar")
	assert.Equal(t, slowest.TraceID, top.Labels["trace_id"])
	assert.Equal(t, slowest.SpanID, top.Labels["span_id"])
	assert.Equal(t, strconv.FormatFloat(*slowest.TTFT, 'g', -1, 64), top.Value)
	t.Logf("slowest client TTFT %.4f s, trace %s: Prometheus's top exemplar %s, trace %s",
		*slowest.TTFT, slowest.TraceID, top.Value, top.Labels["trace_id"])
}
