package llmsloconnector

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/pmetrictest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmslo/llmslo/internal/aggregate"
	"github.com/llmslo/llmslo/internal/metadata"
)

// sumOver adds the points of metric name whose attributes include match.
func sumOver(md pmetric.Metrics, name string, match map[string]string) (total int64) {
	forPoints(md, name, func(m pmetric.Metric, attrs pcommon.Map, dp any) {
		for k, v := range match {
			if got, ok := attrs.Get(k); !ok || got.AsString() != v {
				return
			}
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

func forPoints(md pmetric.Metrics, name string, fn func(pmetric.Metric, pcommon.Map, any)) {
	for _, rm := range md.ResourceMetrics().All() {
		for _, sm := range rm.ScopeMetrics().All() {
			for _, m := range sm.Metrics().All() {
				if m.Name() != name {
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

// TestGoldenCounts checks the golden input's counts by hand: the verdicts
// the processor wrote (see its golden files) add up per SLO, and every ITL
// gap reaches its layer's histogram.
func TestGoldenCounts(t *testing.T) {
	cfg, err := loadConfig(t, "golden")
	require.NoError(t, err)
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, cfg, sink)
	require.NoError(t, c.ConsumeTraces(context.Background(), goldenInput(t)))
	md := c.collect(fixedNow)
	slo := map[string]string{attrSLOName: "interactive"}
	// vllm 3 (met, met, ttft), openllmetry 2 (tpot, met), semconv 4 (met,
	// unknown, e2e, error), v3 1 (met), sglang 1 (itl).
	assert.Equal(t, int64(11), sumOver(md, metricSLORequests, slo))
	assert.Equal(t, int64(5), sumOver(md, metricSLOMet, slo))
	assert.Equal(t, int64(5), sumOver(md, metricSLOViolated, slo))
	assert.Equal(t, int64(1), sumOver(md, metricSLOUnknown, slo))
	assert.Equal(t, int64(1), sumOver(md, metricSLOViolations, map[string]string{attrSLOName: "interactive", attrSLOConstraint: "error"}))
	assert.Equal(t, int64(1), sumOver(md, metricSLOViolations, map[string]string{attrSLOName: "interactive", attrSLOConstraint: "ttft:unknown"}))
	// Token goodput: 128 + 200 (vllm) + 60 (openllmetry) + 101 (semconv) + 5 (v3).
	assert.Equal(t, int64(494), sumOver(md, metricSLOTokensMet, slo))
	// Gaps: openllmetry 4 + v3 2 on the client; sglang's 4 joined steps.
	assert.Equal(t, int64(6), sumOver(md, histNames[histITL][layerClient], nil))
	assert.Equal(t, int64(4), sumOver(md, histNames[histITL][layerServer], nil))
	// Every LLM span has a duration; the non-LLM span of the SGLang trace
	// and the semconv embeddings span are skipped.
	assert.Equal(t, int64(3+1), sumOver(md, histNames[histDuration][layerServer], nil))
	assert.Equal(t, int64(2+4+1), sumOver(md, histNames[histDuration][layerClient], nil))
}

func TestLoadConfig(t *testing.T) {
	str := func(s string) *string { return &s }
	cfg, err := loadConfig(t, "full")
	require.NoError(t, err)
	assert.Equal(t, &Config{
		AttributePrefix:             "llmslo.",
		Dimensions:                  []Dimension{{Name: "tenant"}, {Name: "deployment.environment.name", Default: str("unknown")}},
		ResourceDimensions:          []string{"service.name", "k8s.namespace.name"},
		Histogram:                   HistogramConfig{Exponential: &ExponentialConfig{MaxSize: 1024}},
		Percentiles:                 []float64{50, 95, 99.9},
		Window:                      30 * time.Second,
		AggregationCardinalityLimit: 500,
		SeriesExpiration:            10 * time.Minute,
		AggregationTemporality:      "delta",
		MetricsFlushInterval:        15 * time.Second,
		TokenAwareITL:               true,
	}, cfg)

	def, err := loadConfig(t, "")
	require.NoError(t, err)
	assert.Equal(t, createDefaultConfig(), def)
	assert.NoError(t, componenttest.CheckConfigStruct(def))

	_, err = loadConfig(t, "invalid")
	for _, msg := range []string{
		"dimensions[0].name: must not be empty",
		"histogram: set exponential or explicit, not both",
		"histogram.exponential.max_size: 1 must be between 2 and 16384",
		`histogram.explicit.buckets: unknown kind "latency": allowed values are [ttft tpot itl duration tokens]`,
		"histogram.explicit.buckets.ttft: must be a non-empty, strictly increasing list",
		"percentiles: 0 must be between 0 and 100 (exclusive)",
		"percentiles: 100 must be between 0 and 100 (exclusive)",
		"window: 0s must be a positive duration such as 1m",
		"aggregation_cardinality_limit: -1 must be 0 (no limit) or positive",
		`aggregation_temporality: "sometimes": allowed values are "cumulative", "delta"`,
		"metrics_flush_interval: 0s must be a positive duration such as 5s",
	} {
		assert.ErrorContains(t, err, msg)
	}
}

// llmSpan appends a processed client span with the given values.
func llmSpan(spans ptrace.SpanSlice, model string, ttft, tpot, e2e float64, met bool) {
	s := spans.AppendEmpty()
	s.SetName("chat " + model)
	s.SetStartTimestamp(1_767_225_600_000_000_000)
	s.SetEndTimestamp(pcommon.Timestamp(1_767_225_600_000_000_000 + int64(e2e*1e9)))
	a := s.Attributes()
	a.PutStr("gen_ai.operation.name", "chat")
	a.PutStr("llm.model", model)
	a.PutStr("llm.layer", "client")
	a.PutStr("llm.metrics.source", "semconv:attributes")
	a.PutDouble("llm.ttft", ttft)
	a.PutDouble("llm.tpot", tpot)
	a.PutDouble("llm.e2e", e2e)
	a.PutInt("llm.output_tokens", 100)
	a.PutBool("llm.slo.interactive.met", met)
	if !met {
		a.PutEmptySlice("llm.slo.interactive.violations").AppendEmpty().SetStr("ttft")
	}
}

// TestAccuracy: 100,000 requests from heavy-tailed distributions. Counts and
// the goodput ratio are exact; the windowed percentiles are within 1% of
// numpy's linear percentile of the same values; the exponential histogram is
// within its bucket resolution at the default size and within 1% at
// max_size 1024.
func TestAccuracy(t *testing.T) {
	const n = 100_000
	rng := rand.New(rand.NewPCG(1, 2))
	ttfts, tpots := make([]float64, n), make([]float64, n)
	for i := range n {
		// TTFT: lognormal around 160 ms with a Pareto tail on 5%; TPOT:
		// lognormal around 7 ms.
		ttfts[i] = 0.16 * math.Exp(0.6*rng.NormFloat64())
		if rng.Float64() < 0.05 {
			ttfts[i] *= math.Pow(1-rng.Float64(), -1/1.5)
		}
		tpots[i] = 0.007 * math.Exp(0.3*rng.NormFloat64())
	}
	for _, maxSize := range []int32{160, 1024} {
		t.Run(fmt.Sprintf("max_size=%d", maxSize), func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			cfg.CollectorInstanceID = false
			cfg.Histogram.Exponential = &ExponentialConfig{MaxSize: maxSize}
			sink := new(consumertest.MetricsSink)
			c := newTestConnector(t, cfg, sink)
			met := 0
			for start := 0; start < n; start += 1000 {
				td := ptrace.NewTraces()
				spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
				for i := start; i < start+1000; i++ {
					ok := ttfts[i] <= 0.5
					if ok {
						met++
					}
					llmSpan(spans, "llama", ttfts[i], tpots[i], ttfts[i]+99*tpots[i], ok)
				}
				require.NoError(t, c.ConsumeTraces(context.Background(), td))
			}
			md := c.collect(fixedNow)
			slo := map[string]string{attrSLOName: "interactive"}
			require.Equal(t, int64(n), sumOver(md, metricSLORequests, slo))
			require.Equal(t, int64(met), sumOver(md, metricSLOMet, slo))
			forPoints(md, metricSLOGoodput, func(_ pmetric.Metric, _ pcommon.Map, dp any) {
				assert.Equal(t, float64(met)/n, dp.(pmetric.NumberDataPoint).DoubleValue(), "goodput ratio is exact")
			})

			for _, x := range []struct {
				window string
				values []float64
			}{{"llm.ttft.window", ttfts}, {"llm.tpot.window", tpots}} {
				sorted := slices.Sorted(slices.Values(x.values))
				forPoints(md, x.window, func(_ pmetric.Metric, attrs pcommon.Map, dp any) {
					q, _ := attrs.Get(attrQuantile)
					var p float64
					_, _ = fmt.Sscan(q.Str(), &p)
					exact := aggregate.Percentile(sorted, p*100)
					got := dp.(pmetric.NumberDataPoint).DoubleValue()
					rel := math.Abs(got-exact) / exact
					t.Logf("%s p%v: exact %.6f window %.6f rel.err %.4f%%", x.window, p*100, exact, got, 100*rel)
					assert.Less(t, rel, 0.01)
				})
			}

			// The exponential histogram, read as Prometheus'
			// histogram_quantile reads a native histogram.
			h := c.shards[0].series
			for i := range c.shards {
				if len(c.shards[i].series) > 0 {
					h = c.shards[i].series
				}
			}
			for _, s := range h {
				e := s.hists[histTTFT].(*aggregate.Exponential)
				sorted := slices.Sorted(slices.Values(ttfts))
				scale := e.Scale()
				resolution := math.Pow(2, math.Pow(2, -float64(scale))) - 1
				for _, p := range []float64{50, 90, 99} {
					exact := aggregate.Percentile(sorted, p)
					got := e.Quantile(p / 100)
					rel := math.Abs(got-exact) / exact
					t.Logf("exponential ttft p%v at scale %d (bucket width %.2f%%): exact %.6f histogram %.6f rel.err %.3f%%", p, scale, 100*resolution, exact, got, 100*rel)
					assert.Less(t, rel, resolution, "within one bucket")
					if maxSize >= 1024 {
						assert.Less(t, rel, 0.01)
					}
				}
			}
		})
	}
}

// TestCardinality: 100,000 distinct model names keep the series at the
// limit, one overflow series takes the rest, and memory stays flat.
func TestCardinality(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.AggregationCardinalityLimit = 1000
	c := newTestConnector(t, cfg, new(consumertest.MetricsSink))
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	send := func(from, to int) {
		for start := from; start < to; start += 1000 {
			td := ptrace.NewTraces()
			spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
			for i := start; i < start+1000; i++ {
				llmSpan(spans, fmt.Sprintf("model-%d", i), 0.1, 0.01, 1, true)
			}
			require.NoError(t, c.ConsumeTraces(context.Background(), td))
		}
	}
	send(0, 20_000)
	base := heap()
	send(20_000, 100_000)
	grown := heap()
	assert.Equal(t, int64(999), c.count[layerClient].Load(), "limit minus the overflow series")
	md := c.collect(fixedNow)
	assert.Equal(t, int64(100_000), sumOver(md, metricSLORequests, nil), "every request counted")
	assert.Equal(t, int64(99_001), sumOver(md, metricSLORequests, map[string]string{attrOverflow: "true"}))
	series := map[string]bool{}
	forPoints(md, metricSLORequests, func(_ pmetric.Metric, attrs pcommon.Map, _ any) {
		series[fmt.Sprint(attrs.AsRaw())] = true
	})
	assert.Len(t, series, 1000)
	t.Logf("heap after 20k names: %d KiB, after 100k: %d KiB", base>>10, grown>>10)
	assert.Less(t, float64(grown), float64(base)*1.2+2<<20)
}

// TestKeepsNoInputReferences: clearing the batch after ConsumeTraces does
// not change what is emitted.
func TestKeepsNoInputReferences(t *testing.T) {
	cfg, err := loadConfig(t, "golden")
	require.NoError(t, err)
	c1 := newTestConnector(t, cfg, new(consumertest.MetricsSink))
	c2 := newTestConnector(t, cfg, new(consumertest.MetricsSink))
	in := goldenInput(t)
	require.NoError(t, c1.ConsumeTraces(context.Background(), in))
	in2 := goldenInput(t)
	require.NoError(t, c2.ConsumeTraces(context.Background(), in2))
	// Scribble over every string and map of the second batch.
	for _, rs := range in2.ResourceSpans().All() {
		rs.Resource().Attributes().Range(func(_ string, v pcommon.Value) bool { v.SetStr("scribbled"); return true })
		for _, ss := range rs.ScopeSpans().All() {
			for _, s := range ss.Spans().All() {
				s.Attributes().Range(func(_ string, v pcommon.Value) bool { v.SetStr("scribbled"); return true })
				s.Attributes().Clear()
			}
		}
	}
	require.NoError(t, pmetrictest.CompareMetrics(c1.collect(fixedNow), c2.collect(fixedNow),
		pmetrictest.IgnoreMetricsOrder(), pmetrictest.IgnoreMetricDataPointsOrder(), pmetrictest.IgnoreResourceMetricsOrder()))
}

// TestConcurrent consumes from many goroutines while flushing.
func TestConcurrent(t *testing.T) {
	cfg, err := loadConfig(t, "golden")
	require.NoError(t, err)
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, cfg, sink)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				td := ptrace.NewTraces()
				spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
				for j := range 20 {
					llmSpan(spans, fmt.Sprintf("m%d", (g+i+j)%7), 0.1, 0.01, 1, j%2 == 0)
				}
				require.NoError(t, c.ConsumeTraces(context.Background(), td))
			}
		}()
	}
	for range 20 {
		c.flush(context.Background())
	}
	wg.Wait()
	md := c.collect(fixedNow)
	assert.Equal(t, int64(8*50*20), sumOver(md, metricSLORequests, nil))
	assert.Equal(t, int64(8*50*10), sumOver(md, metricSLOMet, nil))
}

func TestLifecycle(t *testing.T) {
	cfg, err := loadConfig(t, "golden")
	require.NoError(t, err)
	sink := new(consumertest.MetricsSink)
	conn, err := NewFactory().CreateTracesToMetrics(context.Background(), connectortest.NewNopSettings(metadata.Type), cfg, sink)
	require.NoError(t, err)
	assert.Equal(t, consumer.Capabilities{MutatesData: false}, conn.Capabilities())
	require.NoError(t, conn.Shutdown(context.Background()), "shutdown without start")
	conn, err = NewFactory().CreateTracesToMetrics(context.Background(), connectortest.NewNopSettings(metadata.Type), cfg, sink)
	require.NoError(t, err)
	require.NoError(t, conn.Start(context.Background(), componenttest.NewNopHost()))
	require.NoError(t, conn.ConsumeTraces(context.Background(), goldenInput(t)))
	require.NoError(t, conn.Shutdown(context.Background()))
	require.Len(t, sink.AllMetrics(), 1, "pending data is flushed on shutdown")
	assert.Equal(t, int64(11), sumOver(sink.AllMetrics()[0], metricSLORequests, map[string]string{attrSLOName: "interactive"}))
}

// TestSkipsForeignSpans: spans without processor attributes are counted
// and ignored; bad values never reach a histogram.
func TestSkipsForeignSpans(t *testing.T) {
	cfg, err := loadConfig(t, "golden")
	require.NoError(t, err)
	c := newTestConnector(t, cfg, new(consumertest.MetricsSink))
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	spans.AppendEmpty().SetName("GET /")
	llmSpan(spans, "m", math.NaN(), -1, math.Inf(1), true)
	require.NoError(t, c.ConsumeTraces(context.Background(), td))
	md := c.collect(fixedNow)
	assert.Zero(t, sumOver(md, histNames[histTTFT][layerClient], nil))
	assert.Zero(t, sumOver(md, histNames[histTPOT][layerClient], nil))
	assert.Zero(t, sumOver(md, histNames[histE2E][layerClient], nil))
	assert.Equal(t, int64(1), sumOver(md, metricSLORequests, nil))
}

// TestFlushOnTicker: the flush interval drives emission.
func TestFlushOnTicker(t *testing.T) {
	cfg, err := loadConfig(t, "golden")
	require.NoError(t, err)
	cfg.MetricsFlushInterval = 20 * time.Millisecond
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, cfg, sink)
	require.NoError(t, c.Start(context.Background(), componenttest.NewNopHost()))
	require.NoError(t, c.ConsumeTraces(context.Background(), goldenInput(t)))
	require.Eventually(t, func() bool { return len(sink.AllMetrics()) >= 2 }, 5*time.Second, 10*time.Millisecond)
	require.NoError(t, c.Shutdown(context.Background()))
}
