// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmslo/llmslo/internal/aggregate"
	"github.com/llmslo/llmslo/internal/registry"
)

func TestValidatePressure(t *testing.T) {
	slo := func(name string, ttft, tpot, e2e time.Duration) PressureSLO {
		return PressureSLO{Name: name, TTFT: ttft, TPOT: tpot, E2E: e2e}
	}
	const few = "pressure.min_requests: %d is too few for pressure.quantile %v: below %d requests one request can be the window's quantile by itself; set it to at least %d (default 20)"
	for _, tt := range []struct {
		name        string
		quantile    float64
		minRequests int // 0: the default
		slos        []PressureSLO
		err         string
	}{
		{name: "off", quantile: 0.9},
		{name: "one", quantile: 0.9, slos: []PressureSLO{slo("interactive", 500*time.Millisecond, 50*time.Millisecond, 10*time.Second)}},
		{name: "two", quantile: 0.5, slos: []PressureSLO{slo("a", time.Second, 0, 0), slo("b", 0, 0, time.Second)}},
		{name: "quantile zero", quantile: 0, slos: []PressureSLO{slo("a", time.Second, 0, 0)},
			err: "pressure.quantile: 0 must be between 0 and 1 (exclusive; default 0.9)"},
		{name: "quantile percent", quantile: 90, slos: []PressureSLO{slo("a", time.Second, 0, 0)},
			err: "pressure.quantile: 90 must be between 0 and 1 (exclusive; default 0.9)"},
		// Refused though the gauge is off: the value is wrong either way.
		{name: "quantile out of range, no slos", quantile: 5,
			err: "pressure.quantile: 5 must be between 0 and 1 (exclusive; default 0.9)"},
		{name: "min_requests at the robust minimum", quantile: 0.9, minRequests: 12},
		{name: "min_requests below it", quantile: 0.9, minRequests: 11, err: fmt.Sprintf(few, 11, 0.9, 12, 12)},
		{name: "default min_requests too few for P99", quantile: 0.99, err: fmt.Sprintf(few, 20, 0.99, 102, 102)},
		{name: "min_requests huge", quantile: 0.9, minRequests: 1_000_001,
			err: "pressure.min_requests: 1000001 must be at most 1000000 (default 20)"},
		{name: "bad name", quantile: 0.9, slos: []PressureSLO{slo("Interactive", time.Second, 0, 0)},
			err: `pressure.slos[0].name: "Interactive" must match ^[a-z][a-z0-9_]{0,62}$, the processor's SLO names`},
		{name: "twice", quantile: 0.9, slos: []PressureSLO{slo("a", time.Second, 0, 0), slo("a", 0, time.Second, 0)},
			err: `pressure.slos[1].name: "a" is listed twice`},
		{name: "name only", quantile: 0.9, slos: []PressureSLO{{Name: "interactive"}}},
		{name: "bounds", quantile: 0.9, slos: []PressureSLO{slo("a", 100*time.Microsecond, 0, 168*time.Hour)}},
		{name: "negative", quantile: 0.9, slos: []PressureSLO{slo("a", -time.Second, 0, 0)},
			err: "pressure.slos[0].ttft: -1s must be between 100µs and 168h0m0s (a week, the processor's bound), such as 500ms"},
		{name: "1ns", quantile: 0.9, slos: []PressureSLO{slo("a", 0, time.Nanosecond, 0)},
			err: "pressure.slos[0].tpot: 1ns must be between 100µs and 168h0m0s (a week, the processor's bound), such as 500ms"},
		{name: "200h", quantile: 0.9, slos: []PressureSLO{slo("a", 0, 0, 200*time.Hour)},
			err: "pressure.slos[0].e2e: 200h0m0s must be between 100µs and 168h0m0s (a week, the processor's bound), such as 500ms"},
		{name: "itl", quantile: 0.9, slos: []PressureSLO{{Name: "a", TTFT: time.Second, ITL: time.Second}},
			err: "pressure.slos[0].itl: not supported: the itl window holds every gap, the processor's itl constraint bounds each request's largest"},
		{name: "queue_time", quantile: 0.9, slos: []PressureSLO{{Name: "a", QueueTime: time.Second}},
			err: "pressure.slos[0].queue_time: not supported: the connector keeps no window of queue time (name the SLO alone, or give ttft, tpot, e2e)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			cfg.Pressure.Quantile, cfg.Pressure.SLOs = tt.quantile, tt.slos
			if tt.minRequests != 0 {
				cfg.Pressure.MinRequests = tt.minRequests
			}
			err := cfg.Validate()
			if tt.err == "" {
				assert.NoError(t, err)
				return
			}
			assert.EqualError(t, err, tt.err)
		})
	}
}

// TestMinRobustRequests: the fewest requests at which the top one is not
// an order statistic the quantile interpolates.
func TestMinRobustRequests(t *testing.T) {
	for q, want := range map[float64]int{0.5: 4, 0.9: 12, 0.95: 22, 0.99: 102, 0.999: 1002} {
		assert.Equal(t, want, minRobustRequests(q), "q %v", q)
	}
}

// ttftPressureSpans are n spans of TTFT 0.1 s, 0.2 s, ... judged by
// interactive.
func ttftPressureSpans(n int) ptrace.Traces {
	return batch(n, func(spans ptrace.SpanSlice, i int) {
		ttft := float64(i+1) / 10
		llmSpan(spans, "m", ttft, 0.01, ttft+1, true)
	})
}

// TestPressureValue: twenty spans of TTFT 0.1 s .. 2.0 s judged by
// interactive; its pressure is the window's P90 TTFT over 500 ms, the same
// quantile the llm.ttft.window gauge shows, and within the sketch's
// accuracy of 1.81/0.5 (numpy's linear P90 of 0.1 .. 2.0 is 1.81). An SLO
// without a pressure entry, or a constraint without a threshold, writes
// none.
func TestPressureValue(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.Pressure.SLOs = []PressureSLO{{Name: "interactive", TTFT: 500 * time.Millisecond, E2E: 10 * time.Second}}
	require.NoError(t, cfg.Validate())
	c := newTestConnector(t, cfg, new(consumertest.MetricsSink))
	require.NoError(t, c.ConsumeTraces(context.Background(), ttftPressureSpans(20)))
	md := c.collect(fixedNow)

	slo := map[string]string{attrSLOName: "interactive", attrSLOConstraint: "ttft"}
	got := point(t, md, metricSLOPressure.name, slo).(pmetric.NumberDataPoint)
	p90 := point(t, md, windowNames[windowTTFT], map[string]string{attrQuantile: "0.9"}).(pmetric.NumberDataPoint).DoubleValue()
	assert.Equal(t, p90/0.5, got.DoubleValue())
	assert.InEpsilon(t, 1.81/0.5, got.DoubleValue(), 2*sketchAlpha)
	assert.Equal(t, "m", got.Attributes().AsRaw()[attrRequestModel])

	e2e := point(t, md, metricSLOPressure.name, map[string]string{attrSLOName: "interactive", attrSLOConstraint: "e2e"}).(pmetric.NumberDataPoint)
	assert.InEpsilon(t, 2.81/10, e2e.DoubleValue(), 2*sketchAlpha)
	n := 0
	forPoints(md, metricSLOPressure.name, func(m pmetric.Metric, _ pcommon.Map, _ any) {
		assert.Equal(t, "1", m.Unit())
		n++
	})
	assert.Equal(t, 2, n, "no tpot threshold: no tpot pressure")
}

// TestPressureOneSpanBound: what one span can do to the gauge. Honest
// spans have TTFT 0.1 s, 0.2 s, ...; a forged one has 6 days (within the
// processor's week, so it reaches the window). With fewer than
// min_requests requests no point is written; with enough, the forged span
// is not one of the order statistics the P90 interpolates, so the gauge is
// the P90 of the honest values one rank higher, never above the largest
// honest TTFT over the threshold; a forged span heavy enough (ot=th, 64
// requests) to be the quantile by itself makes the window write no point
// until the honest requests outweigh it. Expected values are numpy's
// linear interpolation over the sketch's reported values of the honest
// TTFTs.
func TestPressureOneSpanBound(t *testing.T) {
	const sixDays = 6 * 24 * 3600.0
	sk := aggregate.NewSketchConfig(sketchAlpha)
	report := func(v float64) float64 { s := sk.New(); s.Add(v); return s.Quantile(0) }
	ttft := func(i int) float64 { return float64(i+1) / 10 } // the i-th honest value, 0-based
	// lerp is numpy's linear P90 over n values whose order statistics are
	// the honest ones (the forged span above them all).
	lerp := func(n int) float64 {
		v := float64(n-1) * 0.9
		i := int(math.Floor(v))
		return aggregate.Lerp(report(ttft(i)), report(ttft(i+1)), v-float64(i)) / 0.5
	}
	for _, tt := range []struct {
		name    string
		honest  int
		forged  string // the forged span's tracestate; "-": none
		want    float64
		written bool
	}{
		{name: "below min_requests", honest: 19, forged: "-"},
		{name: "at min_requests", honest: 20, forged: "-", want: lerp(20), written: true},
		// 20 values, the forged one the largest: P90 interpolates the
		// 18th and 19th, both honest.
		{name: "forged with 19 honest", honest: 19, forged: "", want: lerp(20), written: true},
		// 21 values: P90 is the 19th order statistic exactly, 1.9 s.
		{name: "forged with 20 honest", honest: 20, forged: "", want: report(1.9) / 0.5, written: true},
		{name: "forged, weight 64, 20 honest", honest: 20, forged: "ot=th:fc"},
		// 720 + 64 values: floor(783 * 0.9) + 1 = 705 < 720, so the
		// forged 64 are above the interpolated ranks.
		{name: "forged, weight 64, 720 honest", honest: 720, forged: "ot=th:fc", want: lerp(784), written: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			cfg.Pressure.SLOs = []PressureSLO{{Name: "interactive", TTFT: 500 * time.Millisecond}}
			require.NoError(t, cfg.Validate())
			c := newTestConnector(t, cfg, new(consumertest.MetricsSink))
			td := ttftPressureSpans(tt.honest)
			if tt.forged != "-" {
				s := llmSpan(td.ResourceSpans().At(0).ScopeSpans().At(0).Spans(), "m", sixDays, 0.01, sixDays+1, false)
				s.TraceState().FromRaw(tt.forged)
			}
			require.NoError(t, c.ConsumeTraces(context.Background(), td))
			var got []float64
			forPoints(c.collect(fixedNow), metricSLOPressure.name, func(_ pmetric.Metric, _ pcommon.Map, dp any) {
				got = append(got, dp.(pmetric.NumberDataPoint).DoubleValue())
			})
			if !tt.written {
				assert.Empty(t, got)
				return
			}
			require.Len(t, got, 1)
			assert.Equal(t, tt.want, got[0])
			assert.LessOrEqual(t, got[0], report(ttft(tt.honest-1))/0.5, "never above the largest honest TTFT")
		})
	}
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

// TestPressureFromRegistry: the pressure SLOs are resolved at Start against
// the llm_slo processors of the collector. By name, the thresholds are the
// processor's; written ones must equal them; a name no processor judges, a
// contradiction, or nothing to compare is an error that names the entry.
// Without a processor, written thresholds are used and a name alone is an
// error.
func TestPressureFromRegistry(t *testing.T) {
	interactive := map[string]time.Duration{"ttft": 500 * time.Millisecond, "tpot": 50 * time.Millisecond, "e2e": 10 * time.Second, "itl": time.Second}
	queueOnly := map[string]time.Duration{"queue_time": 100 * time.Millisecond}
	for _, tt := range []struct {
		name      string
		processor bool
		slos      []PressureSLO
		want      map[string]float64 // pressure by constraint, for interactive: the P90 over the threshold
		err       string
	}{
		{name: "by name", processor: true, slos: []PressureSLO{{Name: "interactive"}},
			want: map[string]float64{"ttft": 0.5, "tpot": 0.05, "e2e": 10}},
		{name: "written and equal: those only", processor: true, slos: []PressureSLO{{Name: "interactive", TTFT: 500 * time.Millisecond}},
			want: map[string]float64{"ttft": 0.5}},
		{name: "contradiction", processor: true, slos: []PressureSLO{{Name: "interactive", TTFT: 400 * time.Millisecond}},
			err: `pressure.slos[0].ttft: 400ms contradicts llm_slo, which judges SLO "interactive" with ttft 500ms: remove it (the connector takes the processor's thresholds) or make it equal`},
		{name: "a constraint the processor does not bound", processor: true, slos: []PressureSLO{{Name: "queue", TPOT: 50 * time.Millisecond}},
			err: `pressure.slos[0].tpot: 50ms, but llm_slo bounds no tpot in SLO "queue": remove it (the connector takes the processor's thresholds)`},
		{name: "typo", processor: true, slos: []PressureSLO{{Name: "interactiv"}},
			err: `pressure.slos[0]: "interactiv" is judged by no llm_slo processor of this collector (llm_slo judge interactive, queue), so its pressure would never be written: did you mean interactive?`},
		{name: "unknown", processor: true, slos: []PressureSLO{{Name: "batch", TTFT: time.Second}},
			err: `pressure.slos[0]: "batch" is judged by no llm_slo processor of this collector (llm_slo judge interactive, queue), so its pressure would never be written`},
		{name: "nothing to compare", processor: true, slos: []PressureSLO{{Name: "queue"}},
			err: `pressure.slos[0]: "queue": llm_slo bounds none of ttft, tpot, e2e with a configured threshold, so it has no pressure to write`},
		{name: "no processor, written", slos: []PressureSLO{{Name: "interactive", TTFT: 500 * time.Millisecond}},
			want: map[string]float64{"ttft": 0.5}},
		{name: "no processor, name alone", slos: []PressureSLO{{Name: "interactive"}},
			err: `pressure.slos[0]: "interactive": no llm_slo processor runs in this collector to take its thresholds from: write them, such as {name: interactive, ttft: 500ms, e2e: 10s}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.processor {
				t.Cleanup(registry.Register(registry.Processor{ID: "llm_slo", Prefix: "llm.", SLOs: []string{"interactive", "queue"},
					Thresholds: []map[string]time.Duration{interactive, queueOnly}}))
			}
			cfg := createDefaultConfig().(*Config)
			cfg.Pressure.SLOs = tt.slos
			require.NoError(t, cfg.Validate())
			c := newTestConnector(t, cfg, consumertest.NewNop())
			err := c.Start(context.Background(), componenttest.NewNopHost())
			if tt.err != "" {
				require.EqualError(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, c.Shutdown(context.Background())) })
			require.NoError(t, c.ConsumeTraces(context.Background(), ttftPressureSpans(20)))
			md := c.collect(fixedNow)
			got := map[string]float64{}
			forPoints(md, metricSLOPressure.name, func(_ pmetric.Metric, attrs pcommon.Map, dp any) {
				constraint, _ := attrs.Get(attrSLOConstraint)
				got[constraint.Str()] = dp.(pmetric.NumberDataPoint).DoubleValue()
			})
			require.Len(t, got, len(tt.want))
			for constraint, threshold := range tt.want {
				w := map[string]windowKind{"ttft": windowTTFT, "tpot": windowTPOT, "e2e": windowE2E}[constraint]
				p90 := point(t, md, windowNames[w], map[string]string{attrQuantile: "0.9"}).(pmetric.NumberDataPoint).DoubleValue()
				assert.Equal(t, p90/threshold, got[constraint], constraint)
			}
		})
	}
}

// TestPressureShortForm: `slos: [interactive]` names the SLO alone, and
// the long form mixes with it.
func TestPressureShortForm(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	require.NoError(t, confmap.NewFromStringMap(map[string]any{"pressure": map[string]any{
		"slos": []any{"interactive", map[string]any{"name": "batch", "e2e": "30s"}},
	}}).Unmarshal(cfg))
	assert.Equal(t, []PressureSLO{{Name: "interactive"}, {Name: "batch", E2E: 30 * time.Second}}, cfg.Pressure.SLOs)
	require.NoError(t, cfg.Validate())
}
