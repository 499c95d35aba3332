// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/llmslo/llmslo/tools/internal/loadgen"
	"github.com/llmslo/llmslo/tools/internal/termtext"
)

func f(v float64) *float64 { return &v }

// demoData is what the demo shows after a run: the generator's truths for
// three models and three producers, and a connector flush whose counters
// and window gauges equal the truth exactly. Latencies are made long (up to
// a 36 s E2E) so the widest numbers are in the table.
func demoData(t *testing.T) (pmetric.Metrics, []loadgen.Truth) {
	var truths []loadgen.Truth
	for mi, model := range []string{"llama-3.1-70b-instruct", "llama-3.1-8b-instruct", "qwen2.5-1.5b-instruct"} {
		for _, shape := range loadgen.Shapes {
			for i := range 20 {
				scale := float64(mi+1) * (1 + float64(i)/10)
				truths = append(truths, loadgen.Truth{
					Model: model, Shape: shape, Layer: shape.Layer(),
					TTFT: f(0.4 * scale), TPOT: f(0.0123 * scale), E2E: f(4.1 * scale),
					ITLGaps: []float64{0.01 * scale, 0.05 * scale},
				})
			}
		}
	}
	require.NotEmpty(t, truths)
	return exactFlush(truths), truths
}

// exactFlush is the connector's flush for truths if it were exact: one
// resource per service, the SLO counters and the window percentiles.
func exactFlush(truths []loadgen.Truth) pmetric.Metrics {
	md := pmetric.NewMetrics()
	scopes := map[string]pmetric.MetricSlice{} // by service.name
	point := func(g *group, name string) pmetric.NumberDataPoint {
		ms, ok := scopes[g.key.service]
		if !ok {
			rm := md.ResourceMetrics().AppendEmpty()
			rm.Resource().Attributes().PutStr("service.name", g.key.service)
			ms = rm.ScopeMetrics().AppendEmpty().Metrics()
			scopes[g.key.service] = ms
		}
		// One metric per point is enough for collect, which reads points.
		m := ms.AppendEmpty()
		m.SetName(name)
		var dp pmetric.NumberDataPoint
		if strings.HasSuffix(name, ".window") {
			dp = m.SetEmptyGauge().DataPoints().AppendEmpty()
		} else {
			dp = m.SetEmptySum().DataPoints().AppendEmpty()
		}
		dp.Attributes().PutStr("gen_ai.request.model", g.key.model)
		dp.Attributes().PutStr("llm.layer", g.key.layer)
		return dp
	}
	for _, g := range groups(pmetric.NewMetrics(), truths) {
		for i, slo := range sloNames {
			dp := point(g, "llm.slo.requests")
			dp.Attributes().PutStr("llm.slo.name", slo)
			dp.SetIntValue(int64(g.truth[i].Requests))
			dp = point(g, "llm.slo.requests.met")
			dp.Attributes().PutStr("llm.slo.name", slo)
			dp.SetIntValue(int64(g.truth[i].Good))
		}
		for _, name := range windowMetrics {
			for qi, p := range percentiles {
				if vals := g.truthValues(name); len(vals) > 0 {
					dp := point(g, name)
					dp.Attributes().PutStr("quantile", quantiles[qi])
					dp.SetDoubleValue(loadgen.Percentile(vals, p))
				}
			}
		}
	}
	return md
}

func TestTableFitsTheTerminal(t *testing.T) {
	md, truths := demoData(t)
	var wide, narrow bytes.Buffer
	printTable(&wide, md, truths, 30*time.Second, true, 0)
	printTable(&narrow, md, truths, 30*time.Second, true, 120)

	// Unlimited width: the wide layout, a truth row under every series.
	assert.Greater(t, termtext.Width(wide.String()), 120)
	assert.Equal(t, 9, strings.Count(wide.String(), "  truth  "))

	// 120 columns: every line fits, truth folded into DIFF and GROUND TRUTH.
	out := narrow.String()
	for _, line := range strings.Split(out, "\n") {
		assert.LessOrEqual(t, len([]rune(line)), 120, "%q", line)
	}
	assert.NotContains(t, out, "  truth  ")
	lines := strings.Split(out, "\n")
	i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "llama-3.1-70b  chat-app/client") })
	require.GreaterOrEqual(t, i, 0, out)
	// The first model: scale 1.0, 1.1, ..., 2.9, so TTFT = 0.4 s x scale has
	// p50 at rank 9.5 of 19: 0.4 x 1.95 = 780 ms, p90 0.4 x 2.71 = 1084 ms,
	// p99 0.4 x 2.881 = 1152 ms; TPOT and E2E alike; the 40 ITL gaps put
	// p50 halfway between 29 ms and 50 ms. The window values are exact, so
	// DIFF is 0.
	assert.Equal(t, "llama-3.1-70b  chat-app/client  20        780/1084/1152   24.0/33.3/35.4  39.5/126/143  7995/11111/11812   0.00%", lines[i])
	assert.Contains(t, out, "agreement with the ground truth: request counts and goodput exact; windowed percentiles within 0.00%")
	assert.Equal(t, 9, strings.Count(out, "  same\n"))
}

// TestFirstTableFits: the first live table, before the connector's first
// flush, fits 120 columns too.
func TestFirstTableFits(t *testing.T) {
	_, truths := demoData(t)
	var b bytes.Buffer
	printTable(&b, pmetric.NewMetrics(), truths, 5*time.Second, false, 120)
	for _, line := range strings.Split(b.String(), "\n") {
		assert.LessOrEqual(t, len([]rune(line)), 120, "%q", line)
	}
	assert.Equal(t, 9, strings.Count(b.String(), "  0 (truth 20)"))
}
