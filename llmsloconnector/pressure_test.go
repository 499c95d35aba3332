// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

func TestValidatePressure(t *testing.T) {
	slo := func(name string, ttft, tpot, e2e time.Duration) PressureSLO {
		return PressureSLO{Name: name, TTFT: ttft, TPOT: tpot, E2E: e2e}
	}
	for _, tt := range []struct {
		name     string
		quantile float64
		slos     []PressureSLO
		err      string
	}{
		{name: "off", quantile: 0},
		{name: "one", quantile: 0.9, slos: []PressureSLO{slo("interactive", 500*time.Millisecond, 50*time.Millisecond, 10*time.Second)}},
		{name: "two", quantile: 0.5, slos: []PressureSLO{slo("a", time.Second, 0, 0), slo("b", 0, 0, time.Second)}},
		{name: "quantile zero", quantile: 0, slos: []PressureSLO{slo("a", time.Second, 0, 0)},
			err: "pressure.quantile: 0 must be between 0 and 1 (exclusive; default 0.9)"},
		{name: "quantile percent", quantile: 90, slos: []PressureSLO{slo("a", time.Second, 0, 0)},
			err: "pressure.quantile: 90 must be between 0 and 1 (exclusive; default 0.9)"},
		{name: "bad name", quantile: 0.9, slos: []PressureSLO{slo("Interactive", time.Second, 0, 0)},
			err: `pressure.slos[0].name: "Interactive" must match ^[a-z][a-z0-9_]{0,62}$, the processor's SLO names`},
		{name: "twice", quantile: 0.9, slos: []PressureSLO{slo("a", time.Second, 0, 0), slo("a", 0, time.Second, 0)},
			err: `pressure.slos[1].name: "a" is listed twice`},
		{name: "negative", quantile: 0.9, slos: []PressureSLO{slo("a", -time.Second, 0, 0)},
			err: "pressure.slos[0].ttft: -1s must be a positive duration, such as 500ms\n" +
				"pressure.slos[0]: give at least one threshold of ttft, tpot, e2e"},
		{name: "itl", quantile: 0.9, slos: []PressureSLO{{Name: "a", TTFT: time.Second, ITL: time.Second}},
			err: "pressure.slos[0].itl: not supported: the itl window holds every gap, the processor's itl constraint bounds each request's largest"},
		{name: "queue_time", quantile: 0.9, slos: []PressureSLO{{Name: "a", QueueTime: time.Second}},
			err: "pressure.slos[0].queue_time: not supported: the connector keeps no window of queue time\n" +
				"pressure.slos[0]: give at least one threshold of ttft, tpot, e2e"},
		{name: "no threshold", quantile: 0.9, slos: []PressureSLO{slo("a", 0, 0, 0), slo("b", 0, 0, -time.Millisecond)},
			err: "pressure.slos[0]: give at least one threshold of ttft, tpot, e2e\n" +
				"pressure.slos[1].e2e: -1ms must be a positive duration, such as 500ms\n" +
				"pressure.slos[1]: give at least one threshold of ttft, tpot, e2e"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			cfg.Pressure = PressureConfig{Quantile: tt.quantile, SLOs: tt.slos}
			err := cfg.Validate()
			if tt.err == "" {
				assert.NoError(t, err)
				return
			}
			assert.EqualError(t, err, tt.err)
		})
	}
}

// TestPressureValue: ten spans of TTFT 0.1 s .. 1.0 s judged by
// interactive; its pressure is the window's P90 TTFT over 500 ms, the same
// quantile the llm.ttft.window gauge shows, and within the sketch's
// accuracy of 0.91/0.5 (numpy's linear P90 of 0.1 .. 1.0 is 0.91). An SLO without a pressure entry, or a constraint
// without a threshold, writes none.
func TestPressureValue(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.Pressure.SLOs = []PressureSLO{{Name: "interactive", TTFT: 500 * time.Millisecond, E2E: 10 * time.Second}}
	require.NoError(t, cfg.Validate())
	c := newTestConnector(t, cfg, new(consumertest.MetricsSink))
	td := batch(10, func(spans ptrace.SpanSlice, i int) {
		ttft := float64(i+1) / 10
		llmSpan(spans, "m", ttft, 0.01, ttft+1, true)
	})
	require.NoError(t, c.ConsumeTraces(context.Background(), td))
	md := c.collect(fixedNow)

	slo := map[string]string{attrSLOName: "interactive", attrSLOConstraint: "ttft"}
	got := point(t, md, metricSLOPressure.name, slo).(pmetric.NumberDataPoint)
	p90 := point(t, md, windowNames[windowTTFT], map[string]string{attrQuantile: "0.9"}).(pmetric.NumberDataPoint).DoubleValue()
	assert.Equal(t, p90/0.5, got.DoubleValue())
	assert.InEpsilon(t, 0.91/0.5, got.DoubleValue(), 2*sketchAlpha)
	assert.Equal(t, "m", got.Attributes().AsRaw()[attrRequestModel])

	e2e := point(t, md, metricSLOPressure.name, map[string]string{attrSLOName: "interactive", attrSLOConstraint: "e2e"}).(pmetric.NumberDataPoint)
	assert.InEpsilon(t, 1.91/10, e2e.DoubleValue(), 2*sketchAlpha)
	n := 0
	forPoints(md, metricSLOPressure.name, func(m pmetric.Metric, _ pcommon.Map, _ any) {
		assert.Equal(t, "1", m.Unit())
		n++
	})
	assert.Equal(t, 2, n, "no tpot threshold: no tpot pressure")
}

// TestPressureOff: without a pressure block, no point.
func TestPressureOff(t *testing.T) {
	c := newTestConnector(t, createDefaultConfig().(*Config), new(consumertest.MetricsSink))
	require.NoError(t, c.ConsumeTraces(context.Background(), batch(3, func(spans ptrace.SpanSlice, i int) {
		llmSpan(spans, "m", 0.2, 0.01, 1, true)
	})))
	n := 0
	forPoints(c.collect(fixedNow), metricSLOPressure.name, func(pmetric.Metric, pcommon.Map, any) { n++ })
	assert.Zero(t, n)
}
