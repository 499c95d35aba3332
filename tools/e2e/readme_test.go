// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmslo/llmslo/internal/otlpio"
	"github.com/llmslo/llmslo/tools/internal/loadgen"
)

// TestReadmeNamesAndQueries checks the Prometheus material of the
// connector's README (llmsloconnector/README.md) against the built collector
// and a real Prometheus:
//   - every Prometheus name of the metric table is what the exporter
//     exposes, and the exporter exposes no other connector metric;
//   - every PromQL query that README shows returns data: the native-histogram
//     queries on a Prometheus with native histograms, the classic ones on a
//     Prometheus without (reading a connector with `histogram: {explicit: {}}`),
//     the counter queries on both; and the native queries return nothing on
//     the Prometheus without native histograms, as that README warns.
func TestReadmeNamesAndQueries(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "llmsloconnector", "README.md"))
	require.NoError(t, err)
	tableNames := readmePrometheusNames(t, string(readme))
	queries := readmeQueries(t, string(readme))

	grpcPort := freePort(t)
	native, classic := fmt.Sprintf("127.0.0.1:%d", freePort(t)), fmt.Sprintf("127.0.0.1:%d", freePort(t))
	startCollector(t, fmt.Sprintf(readmeCollectorConfig, grpcPort, native, classic))
	promNative := startPrometheusServer(t, native, true)
	promClassic := startPrometheusServer(t, classic, false)

	endpoint := fmt.Sprintf("127.0.0.1:%d", grpcPort)
	sender, err := otlpio.NewSender(endpoint)
	require.NoError(t, err)
	defer sender.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	now := float64(time.Now().UnixMilli()-t0/1e6) - 1000
	require.NoError(t, sender.Send(ctx, buildTraces([]spanSpec{{
		name: "engine.generate", kind: ptrace.SpanKindServer, start: now - 200, end: now,
		// One request, sent once: its own series would have a rate of 0
		// (histogram_quantile: NaN); under the load's model it joins the
		// per-model sums.
		attrs:  map[string]any{"gen_ai.usage.output_tokens": 4, "gen_ai.request.model": "llama-3.1-8b-instruct"},
		events: []float64{now - 100, now - 80, now - 60, now - 30},
	}})))
	// Real-time traffic over several scrapes, so rate() has something to
	// see, from all three producer shapes (vLLM engine spans, chunk-event
	// and semconv client spans).
	_, err = loadgen.Run(ctx, loadgen.Config{
		Endpoint: endpoint, Rate: 40, Duration: 8 * time.Second, Seed: 11, ModelAttr: true,
		Models: map[string]float64{"llama-3.1-8b-instruct": 1, "qwen2.5-1.5b-instruct": 1},
		Shapes: map[loadgen.Shape]float64{loadgen.ShapeVLLM: 1, loadgen.ShapeChunks: 1, loadgen.ShapeSemconv: 1},
	})
	require.NoError(t, err)

	// Names: the exporter's metric families are exactly the table's.
	var exposed []string
	require.Eventually(t, func() bool {
		exposed = metricFamilies(t, "http://"+native+"/metrics")
		return len(exposed) >= len(tableNames)
	}, 30*time.Second, time.Second, "the exporter never exposed every metric")
	assert.Equal(t, tableNames, exposed, "connector README metric table (Prometheus column) vs the exporter's /metrics")
	classicFamilies := metricFamilies(t, "http://"+classic+"/metrics")
	assert.Equal(t, tableNames, classicFamilies, "explicit histograms keep the same family names")

	checkReadmeQueries(t, queries, promNative, promClassic)
}

// readmeCollectorConfig feeds one processor into two connectors: the
// default (exponential histograms) exposed on the first Prometheus
// exporter, and one with classic buckets on the second.
const readmeCollectorConfig = `
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:%d
processors:
  llm_slo:
    custom_presets:
      # An engine span with chunk events, so that the server-side ITL
      # histogram (no built-in engine preset fills it without trace
      # assembly) is exposed too.
      - name: engine_chunks
        layer: server
        match:
          any: [{span_name: engine.generate}]
        attributes:
          output_tokens: [gen_ai.usage.output_tokens]
          model: [gen_ai.request.model]
        events:
          chunk: [gen_ai.content.completion.chunk]
    slos:
      - {name: interactive, ttft: 500ms, tpot: 15ms, e2e: 2s}
      - {name: engine_queue, queue_time: 100ms, selector: {layer: server}}
  batch:
    timeout: 200ms
connectors:
  llm_slo:
    metrics_flush_interval: 1s
    pressure:
      slos: [interactive]
  llm_slo/classic:
    metrics_flush_interval: 1s
    histogram:
      explicit: {}
    pressure:
      slos: [{name: interactive, ttft: 500ms, tpot: 15ms, e2e: 2s}]
exporters:
  prometheus:
    endpoint: %s
  prometheus/classic:
    endpoint: %s
service:
  pipelines:
    traces:
      receivers: [otlp]
      processors: [llm_slo, batch]
      exporters: [llm_slo, llm_slo/classic]
    metrics:
      receivers: [llm_slo]
      exporters: [prometheus]
    metrics/classic:
      receivers: [llm_slo/classic]
      exporters: [prometheus/classic]
  telemetry:
    metrics:
      level: none
`

// checkReadmeQueries runs the README's queries once both Prometheus
// servers have scraped the traffic a few times.
func checkReadmeQueries(t *testing.T, queries map[string][]string, promNative, promClassic string) {
	for _, prom := range []string{promNative, promClassic} {
		require.Eventually(t, func() bool {
			r, ok := queryVector(prom, `sum(llm_slo_requests_total)`)
			return ok && len(r) == 1 && r[0] > 0
		}, 60*time.Second, time.Second, "%s never scraped the connector", prom)
	}
	time.Sleep(3 * time.Second)
	run := func(prom, q string) []float64 {
		r, ok := queryVector(prom, q)
		require.True(t, ok, "query failed: %s", q)
		return r
	}
	for _, q := range queries["native"] {
		values := run(promNative, q)
		assert.NotEmpty(t, values, "native-histogram query returned nothing on Prometheus with native histograms: %s", q)
		assertFinite(t, q, values)
		assert.Empty(t, run(promClassic, q), "without native histograms the query should return nothing: %s", q)
		t.Logf("native  %v  %s", values, q)
	}
	for _, q := range queries["classic"] {
		values := run(promClassic, q)
		assert.NotEmpty(t, values, "classic-bucket query returned nothing: %s", q)
		assertFinite(t, q, values)
		t.Logf("classic %v  %s", values, q)
	}
	for _, q := range queries["any"] {
		for _, prom := range []string{promNative, promClassic} {
			values := run(prom, q)
			assert.NotEmpty(t, values, "query returned nothing: %s", q)
			assertFinite(t, q, values)
			t.Logf("any     %v  %s", values, q)
		}
	}
}

// readmePrometheusNames returns the Prometheus column of the connector README's
// generated metric table, sorted and deduplicated.
func readmePrometheusNames(t *testing.T, readme string) []string {
	begin := strings.Index(readme, "<!-- metric table:")
	end := strings.Index(readme, "<!-- end of metric table -->")
	require.True(t, begin >= 0 && end > begin, "the connector README has no generated metric table")
	var names []string
	for _, line := range strings.Split(readme[begin:end], "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 6 || !strings.HasPrefix(strings.TrimSpace(cells[4]), "`") {
			continue
		}
		names = append(names, strings.Trim(strings.TrimSpace(cells[4]), "`"))
	}
	slices.Sort(names)
	names = slices.Compact(names)
	require.GreaterOrEqual(t, len(names), 20)
	return names
}

var promqlMarker = regexp.MustCompile(`<!-- promql: (\w+)`)

// readmeQueries returns the connector README's PromQL queries by kind (native,
// classic, any): the non-comment lines of the ```promql block after each
// `<!-- promql: KIND ... -->` marker.
func readmeQueries(t *testing.T, readme string) map[string][]string {
	out := map[string][]string{}
	lines := strings.Split(readme, "\n")
	for i := 0; i < len(lines); i++ {
		m := promqlMarker.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```promql"; i++ {
		}
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			if q := strings.TrimSpace(lines[i]); q != "" && !strings.HasPrefix(q, "#") {
				out[m[1]] = append(out[m[1]], q)
			}
		}
	}
	for _, kind := range []string{"native", "classic", "any"} {
		require.NotEmpty(t, out[kind], "the connector README has no %q PromQL block", kind)
	}
	return out
}

// metricFamilies lists the `# TYPE` families of a text exposition, sorted.
func metricFamilies(t *testing.T, url string) []string {
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out []string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 4 && f[0] == "#" && f[1] == "TYPE" {
			out = append(out, f[2])
		}
	}
	require.NoError(t, sc.Err())
	slices.Sort(out)
	return slices.Compact(out)
}

// startPrometheusServer runs Prometheus scraping target every second, with
// or without native histograms.
func startPrometheusServer(t *testing.T, target string, nativeHistograms bool) string {
	if nativeHistograms {
		return runPrometheus(t, []string{target}, "", "native-histograms")
	}
	return runPrometheus(t, []string{target}, "")
}

// queryVector runs an instant query and returns the values of its samples;
// ok is false when the query itself failed.
func queryVector(prom, q string) ([]float64, bool) {
	resp, err := http.Get(prom + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return nil, false
	}
	defer resp.Body.Close()
	var body struct {
		Status string
		Data   struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Value []any `json:"value"`
			}
		}
	}
	if json.NewDecoder(resp.Body).Decode(&body) != nil || body.Status != "success" || body.Data.ResultType != "vector" {
		return nil, false
	}
	var out []float64
	for _, r := range body.Data.Result {
		v, err := strconv.ParseFloat(r.Value[1].(string), 64)
		if err != nil {
			return nil, false
		}
		out = append(out, v)
	}
	return out, true
}

func assertFinite(t *testing.T, q string, values []float64) {
	for _, v := range values {
		assert.False(t, math.IsNaN(v) || math.IsInf(v, 0), "%s returned %v", q, values)
	}
}

// TestReadmeProductionConfig: the README's copy of config/collector.yaml is
// the file itself (make validate checks the file against the distribution).
func TestReadmeProductionConfig(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	file, err := os.ReadFile(filepath.Join("..", "..", "config", "collector.yaml"))
	require.NoError(t, err)
	assert.Equal(t, string(file), readmeBlock(t, string(readme), "<!-- production config", "```yaml"))
}
