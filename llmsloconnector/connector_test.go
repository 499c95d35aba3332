// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/pmetrictest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmslo/llmslo/internal/metadata"
	"github.com/llmslo/llmslo/internal/registry"
)

// fixedNow is the connector clock of the tests: 30 s after the golden
// spans start.
var fixedNow = time.Date(2026, 1, 1, 0, 0, 30, 0, time.UTC)

// testInstanceID is collector.instance.id in the golden files.
const testInstanceID = "00000000-0000-4000-8000-000000000001"

func newTestConnector(t testing.TB, cfg *Config, next consumer.Metrics, opts ...option) *llmSLOConnector {
	t.Helper()
	opts = append([]option{withClock(func() time.Time { return fixedNow }), withInstanceID(testInstanceID)}, opts...)
	c, err := newConnector(connectortest.NewNopSettings(metadata.Type).TelemetrySettings, cfg, next, opts...)
	require.NoError(t, err)
	return c
}

// readInput is the shared golden input, testdata/traces/traces.yaml.
func readInput(t testing.TB) ptrace.Traces {
	t.Helper()
	td, err := golden.ReadTraces(filepath.Join("testdata", "traces", "traces.yaml"))
	require.NoError(t, err)
	return td
}

// caseConfig reads testdata/traces/<name>/config.yaml over the defaults.
func caseConfig(t testing.TB, name string) *Config {
	t.Helper()
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "traces", name, "config.yaml"))
	require.NoError(t, err)
	cfg := createDefaultConfig().(*Config)
	require.NoError(t, cm.Unmarshal(cfg))
	require.NoError(t, cfg.Validate())
	return cfg
}

var compareOptions = []pmetrictest.CompareMetricsOption{
	pmetrictest.IgnoreTimestamp(),
	pmetrictest.IgnoreStartTimestamp(),
	pmetrictest.IgnoreResourceMetricsOrder(),
	pmetrictest.IgnoreMetricsOrder(),
	pmetrictest.IgnoreMetricDataPointsOrder(),
}

// update rewrites the golden output files: go test ./llmsloconnector -run
// TestConnectorWithTraces -update. A changed golden must be explained.
var update = flag.Bool("update", false, "rewrite testdata/traces/*/output.yaml")

// TestConnectorWithTraces is the golden test, in signaltometricsconnector's
// layout: one input, testdata/traces/traces.yaml, and per case a directory
// with config.yaml and the expected output.yaml.
func TestConnectorWithTraces(t *testing.T) {
	// The pressure case sends the input 20 times: the gauge needs
	// pressure.min_requests (default 20) requests in a series' window.
	repeats := map[string]int{"pressure": 20}
	for _, tc := range []string{"exponential", "explicit", "delta", "cardinality_limit", "dimensions", "exemplars", "exemplars_explicit", "input_classes", "pressure"} {
		t.Run(tc, func(t *testing.T) {
			sink := new(consumertest.MetricsSink)
			c := newTestConnector(t, caseConfig(t, tc), sink)
			for range max(1, repeats[tc]) {
				require.NoError(t, c.ConsumeTraces(context.Background(), readInput(t)))
			}
			c.flush(context.Background())
			require.Len(t, sink.AllMetrics(), 1)
			if *update {
				require.NoError(t, golden.WriteMetrics(t, filepath.Join("testdata", "traces", tc, "output.yaml"), sink.AllMetrics()[0]))
			}
			want, err := golden.ReadMetrics(filepath.Join("testdata", "traces", tc, "output.yaml"))
			require.NoError(t, err)
			require.NoError(t, pmetrictest.CompareMetrics(want, sink.AllMetrics()[0], compareOptions...))
		})
	}
}

// point finds the data point of metric name whose attributes include
// match, and fails unless there is exactly one.
func point(t *testing.T, md pmetric.Metrics, name string, match map[string]string) any {
	t.Helper()
	var found []any
	forPoints(md, name, func(_ pmetric.Metric, attrs pcommon.Map, dp any) {
		if matches(attrs, match) {
			found = append(found, dp)
		}
	})
	require.Len(t, found, 1, "%s %v", name, match)
	return found[0]
}

func matches(attrs pcommon.Map, match map[string]string) bool {
	for k, v := range match {
		if got, ok := attrs.Get(k); !ok || got.AsString() != v {
			return false
		}
	}
	return true
}

// sumOver adds the values (counters) or counts (histograms) of the points
// of metric name whose attributes include match.
func sumOver(md pmetric.Metrics, name string, match map[string]string) (total int64) {
	forPoints(md, name, func(_ pmetric.Metric, attrs pcommon.Map, dp any) {
		if !matches(attrs, match) {
			return
		}
		switch p := dp.(type) {
		case pmetric.NumberDataPoint:
			total += p.IntValue()
		case pmetric.ExponentialHistogramDataPoint:
			total += int64(p.Count())
		case pmetric.HistogramDataPoint:
			total += int64(p.Count())
		}
	})
	return total
}

// forPoints calls fn on every point of metric name ("": of every metric).
func forPoints(md pmetric.Metrics, name string, fn func(pmetric.Metric, pcommon.Map, any)) {
	for _, rm := range md.ResourceMetrics().All() {
		for _, sm := range rm.ScopeMetrics().All() {
			for _, m := range sm.Metrics().All() {
				if name != "" && m.Name() != name {
					continue
				}
				switch m.Type() {
				case pmetric.MetricTypeSum:
					for _, dp := range m.Sum().DataPoints().All() {
						fn(m, dp.Attributes(), dp)
					}
				case pmetric.MetricTypeGauge:
					for _, dp := range m.Gauge().DataPoints().All() {
						fn(m, dp.Attributes(), dp)
					}
				case pmetric.MetricTypeExponentialHistogram:
					for _, dp := range m.ExponentialHistogram().DataPoints().All() {
						fn(m, dp.Attributes(), dp)
					}
				case pmetric.MetricTypeHistogram:
					for _, dp := range m.Histogram().DataPoints().All() {
						fn(m, dp.Attributes(), dp)
					}
				}
			}
		}
	}
}

// TestGoldenByHand checks the exponential golden case against values worked
// out by hand from traces.yaml (see its header).
func TestGoldenByHand(t *testing.T) {
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, caseConfig(t, "exponential"), sink)
	require.NoError(t, c.ConsumeTraces(context.Background(), readInput(t)))
	md := c.collect(fixedNow)

	server := map[string]string{"llm.layer": "server"}
	gpt := map[string]string{"llm.layer": "client", attrRequestModel: "gpt-4o-mini-2024-07-18"}
	llama := map[string]string{"llm.layer": "client", attrRequestModel: "llama-3.1-8b"}
	with := func(m map[string]string, kv ...string) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			out[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}

	// Goodput counters, per SLO and series.
	for _, x := range []struct {
		slo                                     string
		series                                  map[string]string
		selected, met, violated, unknown, token int64
	}{
		{"interactive", server, 2, 1, 1, 0, 128},
		{"interactive", gpt, 2, 1, 1, 0, 60},
		{"interactive", llama, 2, 0, 1, 1, 0},
		{"smooth_stream", server, 2, 0, 0, 2, 0},
		{"smooth_stream", gpt, 2, 2, 0, 0, 65},
		{"smooth_stream", llama, 2, 0, 1, 1, 0},
	} {
		m := with(x.series, attrSLOName, x.slo)
		assert.Equal(t, x.selected, sumOver(md, metricSLORequests.name, m), "%s %v requests", x.slo, x.series)
		assert.Equal(t, x.met, sumOver(md, metricSLOMet.name, m), "%s %v met", x.slo, x.series)
		assert.Equal(t, x.violated, sumOver(md, metricSLOViolated.name, m), "%s %v violated", x.slo, x.series)
		assert.Equal(t, x.unknown, sumOver(md, metricSLOUnknown.name, m), "%s %v unknown", x.slo, x.series)
		assert.Equal(t, x.token, sumOver(md, metricSLOTokensMet.name, m), "%s %v tokens", x.slo, x.series)
	}
	slo := map[string]string{attrSLOName: "interactive"}
	assert.Equal(t, int64(6), sumOver(md, metricSLORequests.name, slo))
	assert.Equal(t, int64(2), sumOver(md, metricSLOMet.name, slo))
	for constraint, n := range map[string]int64{"ttft": 1, "tpot": 1, "error": 1, "ttft:unknown": 1, "tpot:unknown": 1} {
		assert.Equal(t, n, sumOver(md, metricSLOViolations.name, with(slo, attrSLOConstraint, constraint)), constraint)
	}
	assert.Equal(t, int64(3), sumOver(md, metricSLOViolations.name, map[string]string{attrSLOName: "smooth_stream", attrSLOConstraint: "itl:unknown"}))
	// By cause: span 2's TTFT miss was its queue, span 3's TPOT miss decode.
	assert.Equal(t, int64(1), sumOver(md, metricSLOViolations.name, with(slo, attrSLOConstraint, "ttft", attrSLOCause, "queue")))
	assert.Equal(t, int64(1), sumOver(md, metricSLOViolations.name, with(slo, attrSLOConstraint, "tpot", attrSLOCause, "decode")))

	// Goodput gauge: met / selected over the window; unknown is not good.
	for _, x := range []struct {
		slo    string
		series map[string]string
		want   float64
	}{
		{"interactive", server, 0.5}, {"interactive", gpt, 0.5}, {"interactive", llama, 0},
		{"smooth_stream", server, 0}, {"smooth_stream", gpt, 1}, {"smooth_stream", llama, 0},
	} {
		dp := point(t, md, metricSLOGoodput.name, with(x.series, attrSLOName, x.slo)).(pmetric.NumberDataPoint)
		assert.Equal(t, x.want, dp.DoubleValue(), "%s %v", x.slo, x.series)
	}

	// Histograms: count, sum, min, max.
	for _, x := range []struct {
		kind             histKind
		layer            layerIndex
		series           map[string]string
		count            uint64
		sum, lo, hi      float64
		tokenType, scale string
	}{
		{kind: histTTFT, layer: layerServer, series: server, count: 2, sum: 1.05, lo: 0.15, hi: 0.9},
		// Span 4 failed: its TTFT is not a latency sample.
		{kind: histTTFT, layer: layerClient, series: gpt, count: 1, sum: 0.1, lo: 0.1, hi: 0.1},
		{kind: histTPOT, layer: layerServer, series: server, count: 2, sum: 0.02, lo: 0.01, hi: 0.01},
		{kind: histTPOT, layer: layerClient, series: gpt, count: 1, sum: 0.025, lo: 0.025, hi: 0.025},
		// Span 3's chunk events: gaps of 20, 20, 30, 30 ms.
		{kind: histITL, layer: layerClient, series: gpt, count: 4, sum: 0.1, lo: 0.02, hi: 0.03},
		// Span duration, end - start, for failed spans too.
		{kind: histDuration, layer: layerServer, series: server, count: 2, sum: 1.425 + 1.905, lo: 1.425, hi: 1.905},
		{kind: histDuration, layer: layerClient, series: gpt, count: 2, sum: 0.203 + 1.5, lo: 0.203, hi: 1.5},
		{kind: histDuration, layer: layerClient, series: llama, count: 2, sum: 0.03 + 0.9, lo: 0.03, hi: 0.9},
		{kind: histE2E, layer: layerServer, series: server, count: 2, sum: 1.42 + 1.9, lo: 1.42, hi: 1.9},
		{kind: histE2E, layer: layerClient, series: gpt, count: 2, sum: 1.7, lo: 0.2, hi: 1.5},
		{kind: histE2E, layer: layerClient, series: llama, count: 1, sum: 0.9, lo: 0.9, hi: 0.9},
		{kind: histQueue, layer: layerServer, series: server, count: 2, sum: 0.61, lo: 0.01, hi: 0.6},
		{kind: histInputTokens, layer: layerServer, series: server, count: 2, sum: 576, lo: 64, hi: 512, tokenType: "input"},
		{kind: histOutputTokens, layer: layerServer, series: server, count: 2, sum: 229, lo: 101, hi: 128, tokenType: "output"},
		{kind: histInputTokens, layer: layerClient, series: gpt, count: 2, sum: 40, lo: 20, hi: 20, tokenType: "input"},
		{kind: histOutputTokens, layer: layerClient, series: gpt, count: 2, sum: 65, lo: 5, hi: 60, tokenType: "output"},
		{kind: histOutputTokens, layer: layerClient, series: llama, count: 1, sum: 30, lo: 30, hi: 30, tokenType: "output"},
	} {
		m := x.series
		if x.tokenType != "" {
			m = with(m, attrTokenType, x.tokenType)
		}
		name := histNames[x.kind][x.layer]
		dp := point(t, md, name, m).(pmetric.ExponentialHistogramDataPoint)
		assert.Equal(t, x.count, dp.Count(), name)
		assert.InDelta(t, x.sum, dp.Sum(), 1e-9, name)
		assert.Equal(t, x.lo, dp.Min(), name)
		assert.Equal(t, x.hi, dp.Max(), name)
		var inBuckets uint64
		for _, n := range dp.Positive().BucketCounts().All() {
			inBuckets += n
		}
		assert.Equal(t, x.count, inBuckets+dp.ZeroCount(), name)
		assert.LessOrEqual(t, dp.Scale(), int32(8), name)
	}
	// No TTFT, TPOT or ITL for the llama client series: span 4 failed, span
	// 5 has none; no ITL on the server (no gaps).
	assert.Zero(t, sumOver(md, histNames[histTTFT][layerClient], llama))
	assert.Zero(t, sumOver(md, histNames[histITL][layerServer], nil))

	// Window gauges: the numpy-linear percentile of the same values, within
	// the sketch's 0.5%. Server TTFT [0.15, 0.9]: p50 0.525, p90 0.825,
	// p99 0.8925. Client ITL [0.02, 0.02, 0.03, 0.03]: p50 0.025, p90 0.03.
	for _, x := range []struct {
		window, q string
		series    map[string]string
		want      float64
	}{
		{"llm.ttft.window", "0.5", server, 0.525}, {"llm.ttft.window", "0.9", server, 0.825},
		{"llm.ttft.window", "0.99", server, 0.8925},
		{"llm.itl.window", "0.5", gpt, 0.025}, {"llm.itl.window", "0.9", gpt, 0.03},
		{"llm.e2e.window", "0.5", llama, 0.9},
	} {
		dp := point(t, md, x.window, with(x.series, attrQuantile, x.q)).(pmetric.NumberDataPoint)
		assert.InEpsilon(t, x.want, dp.DoubleValue(), 0.005, "%s %s %v", x.window, x.q, x.series)
	}

	// Dimensions: model from llm.model or, on span 7, gen_ai.response.model;
	// provider from gen_ai.provider.name or gen_ai.system; the resource
	// keeps service.name only.
	dp := point(t, md, metricSLORequests.name, with(gpt, attrSLOName, "interactive")).(pmetric.NumberDataPoint)
	assert.Equal(t, map[string]any{
		attrRequestModel: "gpt-4o-mini-2024-07-18", attrProviderName: "openai", attrOperationName: "chat",
		"llm.layer": "client", attrCollectorInstance: testInstanceID, attrSLOName: "interactive",
	}, dp.Attributes().AsRaw())
	for _, rm := range md.ResourceMetrics().All() {
		assert.Equal(t, []string{"service.name"}, keys(rm.Resource().Attributes()))
		assert.Equal(t, metadata.ConnectorScopeName, rm.ScopeMetrics().At(0).Scope().Name())
	}
}

func keys(m pcommon.Map) []string {
	var out []string
	for k := range m.All() {
		out = append(out, k)
	}
	return out
}

// BenchmarkConnectorWithTraces runs the golden input, and a 1,000-span
// batch of streamed requests, through each golden case's configuration
// (series already exist: the steady state).
func BenchmarkConnectorWithTraces(b *testing.B) {
	inputs := map[string]ptrace.Traces{
		"golden": readInput(b),
		"1000": batch(1000, func(s ptrace.SpanSlice, i int) {
			r := request{ttft: 0.1 + float64(i%10)/100, tpot: 0.01, e2e: 1, tokens: 100, gapsNs: []int64{20e6, 25e6, 30e6}, met: i%3 != 0, cause: "ttft:queue"}
			appendRequest(s, &r)
		}),
	}
	for _, tc := range []string{"exponential", "explicit", "metric_names_next", "input_classes"} {
		for name, td := range inputs {
			b.Run(tc+"/"+name, func(b *testing.B) {
				c := newTestConnector(b, caseConfig(b, tc), consumertest.NewNop())
				require.NoError(b, c.ConsumeTraces(context.Background(), td))
				spans := td.SpanCount()
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					_ = c.ConsumeTraces(context.Background(), td)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*spans), "ns/span")
			})
		}
	}
}

// BenchmarkConfiguredSLOs: the cost per span is that of the SLOs the span
// carries verdicts for, not of those configured: one verdict per span, 1 or
// 1,000 SLOs registered by the processor.
func BenchmarkConfiguredSLOs(b *testing.B) {
	td := batch(1000, func(s ptrace.SpanSlice, i int) {
		r := request{ttft: 0.1 + float64(i%10)/100, tpot: 0.01, e2e: 1, tokens: 100, gapsNs: []int64{20e6, 25e6, 30e6}, met: i%3 != 0, cause: "ttft:queue"}
		appendRequest(s, &r)
	})
	for _, n := range []int{1, 1000} {
		b.Run(fmt.Sprintf("slos=%d", n), func(b *testing.B) {
			names := []string{"interactive"}
			for i := 1; i < n; i++ {
				names = append(names, fmt.Sprintf("slo_%d", i))
			}
			b.Cleanup(registry.Register(registry.Processor{ID: "llm_slo", Prefix: "llm.", SLOs: names}))
			c := newTestConnector(b, caseConfig(b, "exponential"), consumertest.NewNop())
			require.NoError(b, c.Start(context.Background(), componenttest.NewNopHost()))
			b.Cleanup(func() { _ = c.Shutdown(context.Background()) })
			require.NoError(b, c.ConsumeTraces(context.Background(), td))
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				_ = c.ConsumeTraces(context.Background(), td)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*td.SpanCount()), "ns/span")
		})
	}
}
