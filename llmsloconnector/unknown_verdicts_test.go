// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmslo/llmslo/internal/registry"
)

// TestGoodputUnknownVerdicts: the goodput gauge of an SLO the processor
// registered with unknown_verdicts: exclude is met / (met + violated); with
// the default, met / selected. The counters are the same either way. Six
// requests: 3 met, 1 violated, 2 unknown (ttft:unknown).
func TestGoodputUnknownVerdicts(t *testing.T) {
	for _, c := range []struct {
		name    string
		exclude []string
		want    float64
	}{
		{"bad", nil, 3.0 / 6},
		{"exclude", []string{"interactive"}, 3.0 / 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Cleanup(registry.Register(registry.Processor{ID: "llm_slo", Prefix: "llm.", SLOs: []string{"interactive"}, ExcludeUnknown: c.exclude}))
			td := batch(6, func(spans ptrace.SpanSlice, i int) {
				s := llmSpan(spans, "m", 0.1, 0.01, 1, i != 3)
				if i >= 4 {
					s.Attributes().Remove("llm.slo.interactive.met")
					s.Attributes().PutEmptySlice("llm.slo.interactive.violations").AppendEmpty().SetStr("ttft:unknown")
				}
			})
			md := runStarted(t, createDefaultConfig().(*Config), td)
			slo := map[string]string{attrSLOName: "interactive"}
			for _, x := range []struct {
				def  metricDef
				want int64
			}{{metricSLORequests, 6}, {metricSLOMet, 3}, {metricSLOViolated, 1}, {metricSLOUnknown, 2}} {
				assert.Equal(t, x.want, sumOver(md, x.def.name, slo), x.def.name)
			}
			var got []float64
			forPoints(md, metricSLOGoodput.name, func(_ pmetric.Metric, _ pcommon.Map, dp any) {
				got = append(got, dp.(pmetric.NumberDataPoint).DoubleValue())
			})
			require.Len(t, got, 1)
			assert.Equal(t, c.want, got[0])
		})
	}
}

// TestGoodputExcludeNothingDecided: with exclude, a series whose every
// verdict was unknown has no goodput point (0/0), not a goodput of 0.
func TestGoodputExcludeNothingDecided(t *testing.T) {
	t.Cleanup(registry.Register(registry.Processor{ID: "llm_slo", Prefix: "llm.", SLOs: []string{"interactive"}, ExcludeUnknown: []string{"interactive"}}))
	td := batch(2, func(spans ptrace.SpanSlice, _ int) {
		s := llmSpan(spans, "m", 0.1, 0.01, 1, true)
		s.Attributes().Remove("llm.slo.interactive.met")
		s.Attributes().PutEmptySlice("llm.slo.interactive.violations").AppendEmpty().SetStr("ttft:unknown")
	})
	md := runStarted(t, createDefaultConfig().(*Config), td)
	assert.Equal(t, int64(2), sumOver(md, metricSLOUnknown.name, map[string]string{attrSLOName: "interactive"}))
	n := 0
	forPoints(md, metricSLOGoodput.name, func(pmetric.Metric, pcommon.Map, any) { n++ })
	assert.Zero(t, n)
}
