// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/pmetrictest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// TestMetricNamesGolden is the golden test of the next metric names, in
// TestConnectorWithTraces' layout (whose exponential case is the v1.41
// names); -update rewrites these outputs too.
func TestMetricNamesGolden(t *testing.T) {
	for _, tc := range []string{"metric_names_next", "metric_names_next_delta"} {
		t.Run(tc, func(t *testing.T) {
			sink := new(consumertest.MetricsSink)
			c := newTestConnector(t, caseConfig(t, tc), sink)
			require.NoError(t, c.ConsumeTraces(context.Background(), readInput(t)))
			c.flush(context.Background())
			require.Len(t, sink.AllMetrics(), 1)
			out := filepath.Join("testdata", "traces", tc, "output.yaml")
			if *update {
				require.NoError(t, golden.WriteMetrics(t, out, sink.AllMetrics()[0]))
			}
			want, err := golden.ReadMetrics(out)
			require.NoError(t, err)
			require.NoError(t, pmetrictest.CompareMetrics(want, sink.AllMetrics()[0], compareOptions...))
		})
	}
}

// TestTokenCountersByHand checks the next names' token counters against
// traces.yaml worked by hand: vllm spans 1 and 2 (server), chat-app spans 3
// and 7 (gpt-4o-mini) and 5 (llama); span 4 failed and adds no tokens.
func TestTokenCountersByHand(t *testing.T) {
	md := collectCase(t, "metric_names_next")
	server := map[string]string{"llm.layer": "server"}
	gpt := map[string]string{"llm.layer": "client", attrRequestModel: "gpt-4o-mini-2024-07-18"}
	llama := map[string]string{"llm.layer": "client", attrRequestModel: "llama-3.1-8b"}
	for _, x := range []struct {
		u      usageKind
		series map[string]string
		want   int64 // -1: no point
	}{
		{usageInput, server, 512 + 64},
		{usageOutput, server, 128 + 101},
		{usageCacheRead, server, 256},
		{usageCacheWrite, server, -1},
		{usageReasoning, server, -1},
		{usageInput, gpt, 20 + 20},
		{usageOutput, gpt, 5 + 60},
		{usageCacheRead, gpt, 12},
		{usageCacheWrite, gpt, 8},
		{usageReasoning, gpt, 2 + 40},
		{usageInput, llama, 50},
		{usageOutput, llama, 30},
		{usageCacheRead, llama, -1},
	} {
		layer := layerServer
		if x.series["llm.layer"] == "client" {
			layer = layerClient
		}
		name := namesNext.usage[x.u][layer]
		if x.want < 0 {
			forPoints(md, name, func(_ pmetric.Metric, attrs pcommon.Map, _ any) {
				assert.False(t, matches(attrs, x.series), "%s %v: no producer reported it", name, x.series)
			})
			continue
		}
		dp := point(t, md, name, x.series).(pmetric.NumberDataPoint)
		assert.Equal(t, x.want, dp.IntValue(), "%s %v", name, x.series)
	}
}

// collectCase runs the golden input through a case's configuration.
func collectCase(t *testing.T, tc string) pmetric.Metrics {
	t.Helper()
	c := newTestConnector(t, caseConfig(t, tc), consumertest.NewNop())
	require.NoError(t, c.ConsumeTraces(context.Background(), readInput(t)))
	return c.collect(fixedNow)
}

// TestMetricNameSets: each set emits its own names and none of the
// other's; only v1.41 splits one token histogram by gen_ai.token.type.
func TestMetricNameSets(t *testing.T) {
	v141 := metricNamesEmitted(collectCase(t, "exponential"))
	next := metricNamesEmitted(collectCase(t, "metric_names_next"))
	for _, name := range []string{"gen_ai.client.operation.time_to_first_chunk", "gen_ai.client.operation.time_per_output_chunk",
		"gen_ai.client.operation.duration", "gen_ai.client.token.usage", "llm.server.token.usage"} {
		assert.Contains(t, v141, name)
		assert.NotContains(t, next, name)
	}
	for _, name := range []string{"gen_ai.client.inference.time_to_first_chunk", "gen_ai.client.inference.time_per_output_chunk",
		"gen_ai.client.inference.duration", "gen_ai.client.inference.operation.input_tokens",
		"gen_ai.client.inference.operation.output_tokens", "gen_ai.client.inference.usage.input_tokens",
		"gen_ai.client.inference.usage.reasoning.output_tokens", "llm.server.inference.usage.cache_read.input_tokens"} {
		assert.Contains(t, next, name)
		assert.NotContains(t, v141, name)
	}
	assert.Equal(t, []bool{true, false}, []bool{v141[attrTokenType], next[attrTokenType]}, "gen_ai.token.type on points")
}

// metricNamesEmitted are the metric names in md, and attrTokenType when a
// point carries it.
func metricNamesEmitted(md pmetric.Metrics) map[string]bool {
	seen := map[string]bool{}
	forPoints(md, "", func(m pmetric.Metric, attrs pcommon.Map, _ any) {
		seen[m.Name()] = true
		if _, ok := attrs.Get(attrTokenType); ok {
			seen[attrTokenType] = true
		}
	})
	return seen
}

// TestTokenDetailValues: a token-detail count is counted only when it is a
// whole number of tokens within the processor's limits; any other is a
// rejected value. Under v1.41 the keys are not read at all.
func TestTokenDetailValues(t *testing.T) {
	fill := func(spans ptrace.SpanSlice, i int) {
		s := llmSpan(spans, "m", 0.1, 0.01, 1, true)
		a := s.Attributes()
		switch i {
		case 0:
			a.PutInt("llm.cache_read.input_tokens", 7)
			a.PutDouble("llm.reasoning.output_tokens", 3)
		case 1:
			a.PutInt("llm.cache_read.input_tokens", -1)
			a.PutDouble("llm.reasoning.output_tokens", 2.5)
			a.PutStr("llm.cache_write.input_tokens", "9")
		case 2:
			a.PutInt("llm.cache_read.input_tokens", 1<<40)
		}
	}
	for _, x := range []struct {
		names                          string
		cacheRead, reasoning, rejected int64
	}{
		{names: metricNamesNext, cacheRead: 7, reasoning: 3, rejected: 4},
		{names: metricNamesV141},
	} {
		t.Run(x.names, func(t *testing.T) {
			register(t, "llm.", "interactive")
			cfg := caseConfig(t, "delta")
			cfg.MetricNames = x.names
			c, tel := telemetryConnector(t, cfg)
			require.NoError(t, c.ConsumeTraces(context.Background(), batch(3, fill)))
			md := c.collect(fixedNow)
			n := namesNext.usage
			assert.Equal(t, x.cacheRead, sumOver(md, n[usageCacheRead][layerClient], nil))
			assert.Equal(t, x.reasoning, sumOver(md, n[usageReasoning][layerClient], nil))
			assert.Equal(t, int64(0), sumOver(md, n[usageCacheWrite][layerClient], nil))
			if x.rejected > 0 {
				assert.Equal(t, x.rejected, counter(t, tel, telemetryDefs.rejected))
				assert.Equal(t, int64(300), sumOver(md, n[usageOutput][layerClient], nil), "100 output tokens per span")
			} else {
				_, err := tel.GetMetric(telemetryDefs.rejected.name)
				assert.Error(t, err, "nothing rejected")
			}
		})
	}
}

// TestTokenCountersDelta: under delta temporality a counter with nothing
// new is left out, and counts restart after each flush.
func TestTokenCountersDelta(t *testing.T) {
	register(t, "llm.", "interactive")
	cfg := caseConfig(t, "metric_names_next_delta")
	c := newTestConnector(t, cfg, consumertest.NewNop())
	one := func(cacheRead bool) ptrace.Traces {
		return batch(1, func(spans ptrace.SpanSlice, _ int) {
			s := llmSpan(spans, "m", 0.1, 0.01, 1, true)
			if cacheRead {
				s.Attributes().PutInt("llm.cache_read.input_tokens", 5)
			}
		})
	}
	cacheRead := namesNext.usage[usageCacheRead][layerClient]
	output := namesNext.usage[usageOutput][layerClient]
	require.NoError(t, c.ConsumeTraces(context.Background(), one(true)))
	md := c.collect(fixedNow)
	assert.Equal(t, []int64{5, 100}, []int64{sumOver(md, cacheRead, nil), sumOver(md, output, nil)})
	require.NoError(t, c.ConsumeTraces(context.Background(), one(false)))
	md = c.collect(fixedNow)
	assert.Equal(t, []int64{100}, []int64{sumOver(md, output, nil)})
	assert.False(t, metricNamesEmitted(md)[cacheRead], "no cache-read point in an interval without one")
}

// TestTokenCountersSteadyStateAllocations: under the next names too, a
// span whose series exists costs no allocation (the counters are allocated
// with the series' first token count).
func TestTokenCountersSteadyStateAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	c := newTestConnector(t, caseConfig(t, "metric_names_next"), consumertest.NewNop())
	in := readInput(t)
	td := batch(1000, func(spans ptrace.SpanSlice, i int) {
		s := llmSpan(spans, "m", 0.1+float64(i%10)/100, 0.01, 1, i%3 != 0)
		s.Attributes().PutInt("llm.input_tokens", 50)
		s.Attributes().PutInt("llm.cache_read.input_tokens", int64(i%50))
		s.Attributes().PutInt("llm.reasoning.output_tokens", 10)
	})
	require.NoError(t, c.ConsumeTraces(context.Background(), in)) // creates the series
	require.NoError(t, c.ConsumeTraces(context.Background(), td))
	allocs := testing.AllocsPerRun(20, func() {
		_ = c.ConsumeTraces(context.Background(), td)
		_ = c.ConsumeTraces(context.Background(), in)
	})
	assert.LessOrEqual(t, allocs, 2.0)
}
