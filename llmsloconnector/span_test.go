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

// TestResourceValuesPerResource: the resource's dimension values, read
// once per resource, split the series of each resource: a resource
// dimension (service.name) goes to the output resource, a configured
// dimension falls back to the resource when the span lacks it, and the
// next resource's spans do not see the previous one's values.
func TestResourceValuesPerResource(t *testing.T) {
	cfg := caseConfig(t, "delta")
	cfg.Dimensions = []Dimension{{Name: "deployment.environment"}}
	c := newTestConnector(t, cfg, consumertest.NewNop())
	td := ptrace.NewTraces()
	for _, r := range []struct {
		service, env string
		spanEnv      []string
	}{
		{"a", "prod", []string{"", "canary", ""}},
		{"b", "", []string{"", "canary"}},
	} {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", r.service)
		if r.env != "" {
			rs.Resource().Attributes().PutStr("deployment.environment", r.env)
		}
		spans := rs.ScopeSpans().AppendEmpty().Spans()
		for _, env := range r.spanEnv {
			s := llmSpan(spans, "m", 0.1, 0.01, 1, true)
			if env != "" {
				s.Attributes().PutStr("deployment.environment", env)
			}
		}
	}
	require.NoError(t, c.ConsumeTraces(context.Background(), td))
	got := map[string]uint64{}
	md := c.collect(fixedNow)
	for _, rm := range md.ResourceMetrics().All() {
		service, _ := rm.Resource().Attributes().Get("service.name")
		one := pmetric.NewMetrics()
		rm.CopyTo(one.ResourceMetrics().AppendEmpty())
		forPoints(one, histNames[histE2E][layerClient], func(_ pmetric.Metric, attrs pcommon.Map, dp any) {
			env, _ := attrs.Get("deployment.environment")
			got[service.Str()+"/"+env.Str()] += dp.(pmetric.ExponentialHistogramDataPoint).Count()
		})
	}
	assert.Equal(t, map[string]uint64{"a/prod": 2, "a/canary": 1, "b/": 1, "b/canary": 1}, got)
}

// TestResourceLabelsRepairedPerSpan: a resource value is repaired once,
// when its resource is read, and the repair is still counted for each of
// its spans, as for a span's own values.
func TestResourceLabelsRepairedPerSpan(t *testing.T) {
	cfg := caseConfig(t, "delta")
	cfg.AttributeValueLengthLimit = 8
	c, tel := telemetryConnector(t, cfg)
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "svc\xff-with-a-long-name")
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	for range 3 {
		llmSpan(spans, "m", 0.1, 0.01, 1, true)
	}
	require.NoError(t, c.ConsumeTraces(context.Background(), td))
	md := c.collect(fixedNow)
	require.Equal(t, 1, md.ResourceMetrics().Len())
	service, _ := md.ResourceMetrics().At(0).Resource().Attributes().Get("service.name")
	assert.Equal(t, "svc\uFFFD-w", service.Str(), "repaired, then cut to 8 bytes")
	assert.Equal(t, int64(3), counter(t, tel, telemetryDefs.labelsRepaired))
	assert.Equal(t, int64(3), counter(t, tel, telemetryDefs.labelsTruncated))
}
