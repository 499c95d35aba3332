// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// exemplarValues are the exemplar values and trace ids' last bytes of the
// one point of metric name whose attributes include match.
func exemplarValues(t *testing.T, md pmetric.Metrics, name string, match map[string]string) (values []float64, traces []byte) {
	t.Helper()
	var es pmetric.ExemplarSlice
	switch dp := point(t, md, name, match).(type) {
	case pmetric.ExponentialHistogramDataPoint:
		es = dp.Exemplars()
	case pmetric.HistogramDataPoint:
		es = dp.Exemplars()
	case pmetric.NumberDataPoint:
		es = dp.Exemplars()
	}
	for _, e := range es.All() {
		values = append(values, e.DoubleValue())
		traces = append(traces, e.TraceID()[15])
	}
	return values, traces
}

// TestExemplarsSlowestPerFlush: ten requests with TTFT 0.1 s to 1 s, every
// third violated; three exemplars per point keep the three slowest,
// slowest first, on both histogram shapes and on the violated counter, and
// a flush forgets them.
func TestExemplarsSlowestPerFlush(t *testing.T) {
	for _, shape := range []string{"exponential", "explicit"} {
		t.Run(shape, func(t *testing.T) {
			cfg := caseConfig(t, shape)
			cfg.Exemplars = ExemplarsConfig{Enabled: true, MaxPerDataPoint: 3}
			c := newTestConnector(t, cfg, consumertest.NewNop())
			td := batch(10, func(spans ptrace.SpanSlice, i int) {
				s := llmSpan(spans, "m", float64(i+1)/10, 0.01, float64(i+1), i%3 != 0)
				s.SetTraceID(pcommon.TraceID{15: byte(i + 1)})
			})
			require.NoError(t, c.ConsumeTraces(context.Background(), td))
			md := c.collect(fixedNow)
			values, traces := exemplarValues(t, md, histNames[histTTFT][layerClient], nil)
			assert.Equal(t, []float64{1, 0.9, 0.8}, values)
			assert.Equal(t, []byte{10, 9, 8}, traces)
			// Violated: requests 1, 4, 7, 10, ranked by E2E.
			values, traces = exemplarValues(t, md, metricSLOViolated.name, nil)
			assert.Equal(t, []float64{10, 7, 4}, values)
			assert.Equal(t, []byte{10, 7, 4}, traces)
			values, _ = exemplarValues(t, c.collect(fixedNow), histNames[histTTFT][layerClient], nil)
			assert.Empty(t, values)
		})
	}
}

// TestExemplarsOff: by default no point carries an exemplar.
func TestExemplarsOff(t *testing.T) {
	c := newTestConnector(t, caseConfig(t, "exponential"), consumertest.NewNop())
	require.NoError(t, c.ConsumeTraces(context.Background(), readInput(t)))
	forPoints(c.collect(fixedNow), "", func(m pmetric.Metric, _ pcommon.Map, dp any) {
		var n int
		switch p := dp.(type) {
		case pmetric.ExponentialHistogramDataPoint:
			n = p.Exemplars().Len()
		case pmetric.NumberDataPoint:
			n = p.Exemplars().Len()
		}
		assert.Zero(t, n, m.Name())
	})
}

// BenchmarkSamplingAndExemplars: the cost per span of a 1,000-span batch
// of streamed requests as today (no tracestate, exemplars off), with an
// OTEP 235 tracestate on every span, with exemplars on, and with both.
func BenchmarkSamplingAndExemplars(b *testing.B) {
	for _, tc := range []struct {
		name       string
		tracestate string
		exemplars  bool
	}{
		{"baseline", "", false},
		{"tracestate", "ot=th:e666666666666a", false},
		{"exemplars", "", true},
		{"tracestate+exemplars", "ot=th:e666666666666a", true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			td := batch(1000, func(s ptrace.SpanSlice, i int) {
				r := request{ttft: 0.1 + float64(i%10)/100, tpot: 0.01, e2e: 1, tokens: 100, gapsNs: []int64{20e6, 25e6, 30e6}, met: i%3 != 0, cause: "ttft:queue"}
				appendRequest(s, &r)
				sp := s.At(s.Len() - 1)
				sp.TraceState().FromRaw(tc.tracestate)
				sp.SetTraceID(pcommon.TraceID{15: byte(i), 14: byte(i >> 8)})
			})
			cfg := caseConfig(b, "exponential")
			cfg.Exemplars = ExemplarsConfig{Enabled: tc.exemplars, MaxPerDataPoint: 5}
			c := newTestConnector(b, cfg, consumertest.NewNop())
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
