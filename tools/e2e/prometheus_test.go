// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmslo/llmslo/tools/internal/loadgen"
)

// startPrometheus runs the Prometheus server (Debian package, 2.42) with
// native histograms and any other features, scraping target every second.
func startPrometheus(t *testing.T, target string, features ...string) string {
	return runPrometheus(t, []string{target}, "", append([]string{"native-histograms"}, features...)...)
}

// startPrometheusWith scrapes every target each second and, if ruleFile is
// set, evaluates its rules each second, with native histograms.
func startPrometheusWith(t *testing.T, targets []string, ruleFile string) string {
	return runPrometheus(t, targets, ruleFile, "native-histograms")
}

// runPrometheus runs the Prometheus server (Debian package, 2.42) scraping
// every target each second, with ruleFile's rules (if set) and the given
// feature flags, and returns its URL once it is ready.
func runPrometheus(t *testing.T, targets []string, ruleFile string, features ...string) string {
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("prometheus is not installed (apt-get install prometheus)")
		}
		t.Skip("prometheus is not installed")
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	list, err := json.Marshal(targets) // a YAML flow sequence
	require.NoError(t, err)
	rules := ""
	if ruleFile != "" {
		rules = fmt.Sprintf("rule_files: [%q]\n", ruleFile)
	}
	require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf(`
global:
  scrape_interval: 1s
  evaluation_interval: 1s
%sscrape_configs:
  - job_name: llmslo
    static_configs:
      - targets: %s
`, rules, list)), 0o600))
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	args := []string{"--config.file=" + cfg, "--storage.tsdb.path=" + filepath.Join(dir, "data"), "--web.listen-address=" + addr}
	for _, f := range features {
		args = append(args, "--enable-feature="+f)
	}
	startProcess(t, filepath.Join(dir, "prometheus.log"), bin, args...)
	prom := "http://" + addr
	require.Eventually(t, func() bool {
		resp, err := http.Get(prom + "/-/ready")
		if err != nil {
			return false
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 30*time.Second, 200*time.Millisecond, "prometheus never became ready")
	return prom
}

// query runs an instant PromQL query returning one scalar sample; ok is
// false when the result is empty.
func query(t *testing.T, prom, q string) (float64, bool) {
	t.Helper()
	resp, err := http.Get(prom + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return 0, false
	}
	defer resp.Body.Close()
	var body struct {
		Status string
		Data   struct {
			Result []struct {
				Value []any `json:"value"`
			}
		}
	}
	if json.NewDecoder(resp.Body).Decode(&body) != nil || body.Status != "success" || len(body.Data.Result) != 1 {
		return 0, false
	}
	v, err := strconv.ParseFloat(body.Data.Result[0].Value[1].(string), 64)
	return v, err == nil
}

// TestPrometheusEndToEnd: the load generator's traffic goes through the
// built collector (processor + connector + Prometheus exporter) into a real
// Prometheus; what PromQL reads back is checked against the ground truth.
func TestPrometheusEndToEnd(t *testing.T) {
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
        tpot: 15ms
        e2e: 2s
  batch:
    timeout: 200ms
connectors:
  llm_slo:
    metrics_flush_interval: 1s
exporters:
  prometheus:
    endpoint: %s
service:
  pipelines:
    traces:
      receivers: [otlp]
      processors: [llm_slo, batch]
      exporters: [llm_slo]
    metrics:
      receivers: [llm_slo]
      exporters: [prometheus]
  telemetry:
    metrics:
      level: none
`, grpcPort, promExporter))
	prom := startPrometheus(t, promExporter)

	const n = 3000
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	truths, err := loadgen.Run(ctx, loadgen.Config{
		Endpoint: fmt.Sprintf("127.0.0.1:%d", grpcPort), Rate: 20, Seed: 7, Fast: true, Count: n, ModelAttr: true,
		Models: map[string]float64{"llama-3.1-8b-instruct": 3, "llama-3.1-70b-instruct": 1, "qwen2.5-1.5b-instruct": 2},
		Shapes: map[loadgen.Shape]float64{loadgen.ShapeVLLM: 1, loadgen.ShapeChunks: 1, loadgen.ShapeSemconv: 1},
	})
	require.NoError(t, err)
	require.Len(t, truths, n)

	slo := loadgen.SLO{TTFT: 500 * time.Millisecond, TPOT: 15 * time.Millisecond, E2E: 2 * time.Second}
	good := 0
	for i := range truths {
		if slo.Good(&truths[i]) {
			good++
		}
	}
	// Wait until Prometheus has scraped every request.
	require.Eventually(t, func() bool {
		v, ok := query(t, prom, `sum(llm_slo_requests_total{llm_slo_name="interactive"})`)
		return ok && v == n
	}, 90*time.Second, time.Second, "Prometheus never saw all %d requests", n)
	time.Sleep(2 * time.Second) // one more scrape, so every counter is current

	// Goodput from the counters: exact.
	met, ok := query(t, prom, `sum(llm_slo_requests_met_total{llm_slo_name="interactive"})`)
	require.True(t, ok)
	assert.Equal(t, float64(good), met, "good requests")
	ratio, ok := query(t, prom, `sum(llm_slo_requests_met_total{llm_slo_name="interactive"}) / sum(llm_slo_requests_total{llm_slo_name="interactive"})`)
	require.True(t, ok)
	assert.Equal(t, float64(good)/n, ratio, "goodput ratio")
	t.Logf("goodput: %d of %d requests (%.4f), exact", good, n, ratio)

	// Percentiles from the exponential histograms (native histograms in
	// Prometheus), through histogram_quantile. The connector's default
	// max_size of 160 buckets keeps scale >= 3 for any range of values
	// below 2^20 (latencies from 1 ms to 17 min), so one bucket spans at most
	// 2^(1/8) - 1 = 9.05%; histogram_quantile interpolates inside the bucket
	// that holds the rank, so its error is at most one bucket width.
	bucketWidth := math.Pow(2, 1.0/8) - 1
	layerValues := func(layer string, pick func(*loadgen.Truth) *float64) []float64 {
		var out []float64
		for i := range truths {
			if truths[i].Layer == layer && !truths[i].Error {
				if v := pick(&truths[i]); v != nil {
					out = append(out, *v)
				}
			}
		}
		slices.Sort(out)
		return out
	}
	for _, c := range []struct {
		metric, layer string
		pick          func(*loadgen.Truth) *float64
	}{
		{"gen_ai_server_time_to_first_token_seconds", "server", func(t *loadgen.Truth) *float64 { return t.TTFT }},
		{"gen_ai_client_operation_time_to_first_chunk_seconds", "client", func(t *loadgen.Truth) *float64 { return t.TTFT }},
		{"gen_ai_server_time_per_output_token_seconds", "server", func(t *loadgen.Truth) *float64 { return t.TPOT }},
		{"llm_client_time_per_output_token_seconds", "client", func(t *loadgen.Truth) *float64 { return t.TPOT }},
	} {
		values := layerValues(c.layer, c.pick)
		for _, p := range []float64{50, 90, 99} {
			got, ok := query(t, prom, fmt.Sprintf(`histogram_quantile(%v, sum(%s))`, p/100, c.metric))
			require.True(t, ok, c.metric)
			exact := loadgen.Percentile(values, p)
			rel := math.Abs(got-exact) / exact
			t.Logf("%s p%v: histogram_quantile %.5f, truth %.5f, rel.err %.2f%% (bound %.2f%%)", c.metric, p, got, exact, 100*rel, 100*bucketWidth)
			assert.LessOrEqual(t, rel, bucketWidth, "%s p%v", c.metric, p)
		}
	}

	// The windowed percentile gauges, per series (model and producer):
	// within 1% of numpy's linear percentile of the same requests.
	for _, model := range []string{"llama-3.1-8b-instruct", "llama-3.1-70b-instruct", "qwen2.5-1.5b-instruct"} {
		for _, shape := range loadgen.Shapes {
			var ttft, tpot []float64
			for i := range truths {
				tr := &truths[i]
				if tr.Model != model || tr.Shape != shape || tr.Error {
					continue
				}
				if tr.TTFT != nil {
					ttft = append(ttft, *tr.TTFT)
				}
				if tr.TPOT != nil {
					tpot = append(tpot, *tr.TPOT)
				}
			}
			slices.Sort(ttft)
			slices.Sort(tpot)
			for _, w := range []struct {
				metric string
				values []float64
			}{{"llm_ttft_window_seconds", ttft}, {"llm_tpot_window_seconds", tpot}} {
				for _, p := range []float64{50, 90, 99} {
					q := fmt.Sprintf(`%s{quantile="%v",gen_ai_request_model=%q,exported_job=%q}`, w.metric, p/100, model, shape.Service())
					got, ok := query(t, prom, q)
					require.True(t, ok, q)
					exact := loadgen.Percentile(w.values, p)
					assert.InEpsilon(t, exact, got, 0.01, q)
				}
			}
		}
	}
}
