// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// telemetryConnector is a started connector whose own metrics are read
// back through tel.
func telemetryConnector(t *testing.T, cfg *Config) (*llmSLOConnector, *componenttest.Telemetry) {
	t.Helper()
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	c, err := newConnector(tel.NewTelemetrySettings(), cfg, consumertest.NewNop(), withClock(func() time.Time { return fixedNow }))
	require.NoError(t, err)
	require.NoError(t, c.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, c.Shutdown(context.Background())) })
	return c, tel
}

func counter(t *testing.T, tel *componenttest.Telemetry, def metricDef) int64 {
	t.Helper()
	m, err := tel.GetMetric(def.name)
	require.NoError(t, err, def.name)
	return m.Data.(metricdata.Sum[int64]).DataPoints[0].Value
}

// TestForgedVerdicts: the connector counts only the SLOs the processors
// judge. A plain span carrying forged llm.metrics.source-less verdicts is
// skipped; an LLM span's verdicts under unconfigured names, and violation
// entries outside the constraint vocabulary, add no series and are
// counted.
func TestForgedVerdicts(t *testing.T) {
	register(t, "llm.", "interactive")
	c, tel := telemetryConnector(t, caseConfig(t, "delta"))
	td := batch(3, func(spans ptrace.SpanSlice, i int) {
		switch i {
		case 0: // not an LLM span: no source
			s := spans.AppendEmpty()
			s.Attributes().PutBool("llm.slo.forged.met", true)
			s.Attributes().PutStr("llm.layer", "client")
		case 1: // an LLM span with a forged name and a forged constraint
			s := llmSpan(spans, "m", 0.1, 0.01, 1, false)
			s.Attributes().PutBool("llm.slo.forged.met", true)
			v, _ := s.Attributes().Get("llm.slo.interactive.violations")
			v.Slice().AppendEmpty().SetStr("made-up")
		case 2:
			llmSpan(spans, "m", 0.1, 0.01, 1, true)
		}
	})
	require.NoError(t, c.ConsumeTraces(context.Background(), td))
	md := c.collect(fixedNow)
	forPoints(md, metricSLORequests.name, func(_ pmetric.Metric, attrs pcommon.Map, _ any) {
		name, _ := attrs.Get(attrSLOName)
		assert.Equal(t, "interactive", name.Str())
	})
	assert.Equal(t, int64(2), sumOver(md, metricSLORequests.name, nil))
	assert.Equal(t, int64(1), sumOver(md, metricSLOViolations.name, nil), "ttft only")
	assert.Equal(t, int64(1), counter(t, tel, telemetryDefs.skipped))
	assert.Equal(t, int64(1), counter(t, tel, telemetryDefs.verdictsIgnored))
	assert.Equal(t, int64(1), counter(t, tel, telemetryDefs.rejected), "the made-up constraint")
}

// TestLabels: label values reach the backend as valid UTF-8 no longer than
// attribute_value_length_limit; values that repair alike share one series.
func TestLabels(t *testing.T) {
	cfg := caseConfig(t, "delta")
	cfg.AttributeValueLengthLimit = 8
	c, tel := telemetryConnector(t, cfg)
	models := []string{"m\xff", "m\xfe", "llama-3.1-70b-instruct", "modèle-très-long", "short"}
	td := batch(len(models), func(spans ptrace.SpanSlice, i int) { llmSpan(spans, models[i], 0.1, 0.01, 1, true) })
	require.NoError(t, c.ConsumeTraces(context.Background(), td))
	md := c.collect(fixedNow)
	got := map[string]int64{}
	forPoints(md, metricSLORequests.name, func(_ pmetric.Metric, attrs pcommon.Map, dp any) {
		m, _ := attrs.Get(attrRequestModel)
		got[m.Str()] += dp.(pmetric.NumberDataPoint).IntValue()
	})
	assert.Equal(t, map[string]int64{"m\uFFFD": 2, "llama-3.": 1, "modèle-": 1, "short": 1}, got)
	assert.Equal(t, int64(2), counter(t, tel, telemetryDefs.labelsRepaired))
	assert.Equal(t, int64(2), counter(t, tel, telemetryDefs.labelsTruncated))
}

func TestLabelFunction(t *testing.T) {
	for _, tc := range []struct {
		in, want            string
		limit               int
		repaired, truncated int64
	}{
		{"gpt-4o", "gpt-4o", 8, 0, 0},
		{"gpt-4o", "gpt-4o", 0, 0, 0},
		{"a\xffb", "a\uFFFDb", 0, 1, 0},
		{"ééé", "éé", 5, 0, 1},        // a cut inside the third é backs off to its start
		{"\xffab", "\uFFFD", 3, 1, 1}, // repaired first (U+FFFD is 3 bytes), then cut
		{strings.Repeat("x", 300), strings.Repeat("x", 256), 256, 0, 1},
	} {
		var fixes labelFixes
		assert.Equal(t, tc.want, label(tc.in, tc.limit, &fixes), "%q", tc.in)
		assert.Equal(t, labelFixes{tc.repaired, tc.truncated}, fixes, "%q", tc.in)
	}
}

// TestForgedNamesTeachNothing: with no processor registered, SLO names are
// learned only from the processor's spans: a plain span's forged verdicts
// teach no name (they would take the room of real ones).
func TestForgedNamesTeachNothing(t *testing.T) {
	c, _ := telemetryConnector(t, caseConfig(t, "delta"))
	require.Empty(t, c.src.processors)
	td := batch(65, func(spans ptrace.SpanSlice, i int) {
		s := spans.AppendEmpty()
		s.Attributes().PutStr("llm.layer", "client")
		s.Attributes().PutBool(fmt.Sprintf("llm.slo.forged_%d.met", i), true)
	})
	require.NoError(t, c.ConsumeTraces(context.Background(), td))
	assert.Empty(t, *c.src.names.list.Load())
	require.NoError(t, c.ConsumeTraces(context.Background(), batch(1, func(s ptrace.SpanSlice, _ int) { llmSpan(s, "m", 0.1, 0.01, 1, true) })))
	assert.Equal(t, []string{"interactive"}, *c.src.names.list.Load())
	assert.Equal(t, int64(1), sumOver(c.collect(fixedNow), metricSLORequests.name, nil))
}
