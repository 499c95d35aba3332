// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/sampling"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmslo/llmslo/internal/adjusted"
)

// sampledRun is one connector fed a stream of requests.
type sampledRun struct {
	c    *llmSLOConnector
	sink *consumertest.MetricsSink
}

func newSampledRun(t *testing.T, cfg *Config) *sampledRun {
	sink := new(consumertest.MetricsSink)
	return &sampledRun{c: newTestConnector(t, cfg, sink), sink: sink}
}

func (r *sampledRun) result(t *testing.T) pmetric.Metrics {
	r.c.flush(context.Background())
	require.Len(t, r.sink.AllMetrics(), 1)
	return r.sink.AllMetrics()[0]
}

// TestSampledCountsUnbiased: 100,000 requests, 80% of them meeting the
// SLO, go whole into one connector and, sampled at 10% the way an OTEP 235
// sampler does (the trace id's 56 random bits against the threshold, th
// written into the tracestate), into another. The sampled run's counts are
// within four standard deviations of the whole run's, and its goodput
// ratio within four standard errors.
func TestSampledCountsUnbiased(t *testing.T) {
	const n, p, batchSize = 100_000, 0.1, 1000
	th, err := sampling.ProbabilityToThreshold(p)
	require.NoError(t, err)
	tracestate := "ot=th:" + th.TValue()
	whole, sampled := newSampledRun(t, caseConfig(t, "exponential")), newSampledRun(t, caseConfig(t, "exponential"))
	rng := rand.New(rand.NewPCG(16, 235))
	kept := 0
	for range n / batchSize {
		all, some := ptrace.NewTraces(), ptrace.NewTraces()
		allSpans := all.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
		someSpans := some.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
		for range batchSize {
			var id pcommon.TraceID
			for i := range id {
				id[i] = byte(rng.Uint32())
			}
			ttft, met := 0.05+rng.Float64(), rng.Float64() < 0.8
			llmSpan(allSpans, "m", ttft, 0.01, 2, met).SetTraceID(id)
			if !th.ShouldSample(sampling.TraceIDToRandomness(id)) {
				continue
			}
			kept++
			s := llmSpan(someSpans, "m", ttft, 0.01, 2, met)
			s.SetTraceID(id)
			s.TraceState().FromRaw(tracestate)
		}
		require.NoError(t, whole.c.ConsumeTraces(context.Background(), all))
		require.NoError(t, sampled.c.ConsumeTraces(context.Background(), some))
	}
	want, got := whole.result(t), sampled.result(t)
	slo := map[string]string{attrSLOName: "interactive"}
	for _, x := range []struct {
		name  string
		match map[string]string
		scale float64 // tokens per request
	}{
		{metricSLORequests.name, slo, 1},
		{metricSLOMet.name, slo, 1},
		{metricSLOViolated.name, slo, 1},
		{metricSLOTokensMet.name, slo, 100},
		{histNames[histTTFT][layerClient], nil, 1},
		{histNames[histE2E][layerClient], nil, 1},
	} {
		exact, estimate := float64(sumOver(want, x.name, x.match)), float64(sumOver(got, x.name, x.match))
		// A count of m requests sampled at p: variance m(1-p)/p, in requests.
		bound := 4 * x.scale * math.Sqrt(exact/x.scale*(1-p)/p)
		assert.InDelta(t, exact, estimate, bound, x.name)
		t.Logf("%s: %.0f whole, %.0f sampled (%d spans kept), bound ±%.0f", x.name, exact, estimate, kept, bound)
	}
	ratio := func(md pmetric.Metrics) float64 {
		return point(t, md, metricSLOGoodput.name, slo).(pmetric.NumberDataPoint).DoubleValue()
	}
	r := ratio(want)
	stderr := math.Sqrt(r * (1 - r) / float64(kept))
	assert.InDelta(t, r, ratio(got), 4*stderr)
	t.Logf("goodput ratio: %.4f whole, %.4f sampled, bound ±%.4f", r, ratio(got), 4*stderr)
}

// TestTracestateOutcomes: a malformed threshold counts one request and is
// counted in the connector's telemetry; with sampling_adjusted_counts off,
// a valid threshold counts one too. The spans that counted above one, and
// the requests they counted, are in llm.slo.weighted_spans and
// llm.slo.requests.weighted.
func TestTracestateOutcomes(t *testing.T) {
	for _, tt := range []struct {
		name      string
		on        bool
		max       float64 // max_adjusted_count; 0: the default
		ts        []string
		requests  int64
		malformed int64
		// weighted and spans: the requests counted from spans standing
		// for more than one, and those spans.
		weighted, spans int64
	}{
		{"adjusted", true, 0, []string{"ot=th:c", "ot=th:8", "", "vendor=x"}, 4 + 2 + 1 + 1, 0, 4 + 2, 2},
		{"sampled at 100%", true, 0, []string{"ot=th:0", "ot=th:c"}, 1 + 4, 0, 4, 1},
		{"malformed", true, 0, []string{"ot=th:zz", "ot=th:c"}, 1 + 4, 1, 4, 1},
		{"at the default cap", true, 0, []string{"ot=th:fc", "ot=th:fe"}, 64 + 1, 1, 64, 1},
		{"forged beyond the default cap", true, 0, []string{"ot=th:fffff", "ot=th:ff"}, 1 + 1, 2, 0, 0},
		{"at a lowered cap", true, 4, []string{"ot=th:c", "ot=th:e"}, 4 + 1, 1, 4, 1},
		{"beyond one in a million", true, adjusted.MaxCount, []string{"ot=th:ffffffffffffff", "ot=th:fffff"}, 1 + 1<<20, 1, 1 << 20, 1},
		{"malformed, repeated", true, 0, []string{"ot=th:zz", "ot=th:zz", "ot=th:c", "ot=th:c"}, 1 + 1 + 4 + 4, 2, 4 + 4, 2},
		{"off", false, 0, []string{"ot=th:c", "ot=th:zz"}, 2, 0, 0, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := caseConfig(t, "exponential")
			cfg.SamplingAdjustedCounts = tt.on
			if tt.max != 0 {
				cfg.MaxAdjustedCount = tt.max
			}
			c, tel := telemetryConnector(t, cfg)
			td := batch(len(tt.ts), func(spans ptrace.SpanSlice, i int) {
				llmSpan(spans, "m", 0.2, 0.01, 1, true).TraceState().FromRaw(tt.ts[i])
			})
			require.NoError(t, c.ConsumeTraces(context.Background(), td))
			md := c.collect(fixedNow)
			slo := map[string]string{attrSLOName: "interactive"}
			assert.Equal(t, tt.requests, sumOver(md, metricSLORequests.name, slo))
			assert.Equal(t, tt.requests, sumOver(md, metricSLOMet.name, slo))
			assert.Equal(t, 100*tt.requests, sumOver(md, metricSLOTokensMet.name, slo))
			assert.Equal(t, tt.requests, sumOver(md, histNames[histTTFT][layerClient], nil))
			assert.Equal(t, tt.weighted, sumOver(md, metricSLOWeighted.name, slo))
			assert.Equal(t, tt.spans, sumOver(md, metricSLOWeightedSpans.name, slo))
			if tt.malformed == 0 {
				_, err := tel.GetMetric(telemetryDefs.tracestate.name)
				assert.Error(t, err)
				return
			}
			assert.Equal(t, tt.malformed, counter(t, tel, telemetryDefs.tracestate))
		})
	}
}

// TestForgedThresholdBuysLittle: one span whose sender forged its own
// sampling threshold joins 1,000 honest requests of which one met the SLO.
// Beyond max_adjusted_count it counts as the one request it is; at the cap it
// moves the series by max_adjusted_count requests and no more.
func TestForgedThresholdBuysLittle(t *testing.T) {
	for _, tt := range []struct {
		name           string
		forged         string
		requests, good int64
	}{
		{"th:fffff (a million)", "ot=th:fffff", 1001, 2},
		{"th:ffffffffffffff (2^56)", "ot=th:ffffffffffffff", 1001, 2},
		{"th:fe (128, above the cap)", "ot=th:fe", 1001, 2},
		{"th:fc (64, within the cap)", "ot=th:fc", 1064, 65},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := telemetryConnector(t, caseConfig(t, "exponential"))
			td := batch(1001, func(spans ptrace.SpanSlice, i int) {
				s := llmSpan(spans, "m", 0.2, 0.01, 1, i == 0 || i == 1000)
				if i == 1000 {
					s.TraceState().FromRaw(tt.forged)
				}
			})
			require.NoError(t, c.ConsumeTraces(context.Background(), td))
			md := c.collect(fixedNow)
			slo := map[string]string{attrSLOName: "interactive"}
			assert.Equal(t, tt.requests, sumOver(md, metricSLORequests.name, slo))
			assert.Equal(t, tt.good, sumOver(md, metricSLOMet.name, slo))
			assert.Equal(t, tt.requests, sumOver(md, histNames[histTTFT][layerClient], nil))
		})
	}
}
