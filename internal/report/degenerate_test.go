// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"bytes"
	"context"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// TestDegenerateInputs: inputs whose values a log axis or a range cannot
// hold (one request, identical values, zeros, a sub-millisecond queue
// time, no LLM span at all) give a report in every format. Before, the HTML
// report panicked on the first three ("Values must be greater than 0 for a
// log scale").
func TestDegenerateInputs(t *testing.T) {
	writers := map[string]func(io.Writer, *Report) error{
		"text": WriteText, "markdown": WriteMarkdown, "json": WriteJSON, "html": WriteHTML,
	}
	for name, queue := range map[string][]float64{
		"one request, 0.2 ms queue": {0.0002},
		"identical values":          {0.0002, 0.0002, 0.0002},
		"zeros":                     {0, 0, 0.001},
		"all zero":                  {0, 0},
		"no LLM span":               nil,
	} {
		t.Run(name, func(t *testing.T) {
			td := ptrace.NewTraces()
			spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
			if queue == nil {
				spans.AppendEmpty().SetName("GET /health")
			}
			for i, q := range queue {
				s := spans.AppendEmpty()
				s.SetName("llm_request")
				s.SetStartTimestamp(1e18)
				s.SetEndTimestamp(pcommon.Timestamp(1e18 + 1e9 + 1e6*uint64(i)))
				s.Attributes().PutDouble("gen_ai.latency.time_in_queue", q)
				s.Attributes().PutDouble("gen_ai.latency.time_to_first_token", 0.1)
			}
			e, err := NewEngine(context.Background(), goldenOptions(t))
			require.NoError(t, err)
			require.NoError(t, e.Consume(context.Background(), td))
			require.NoError(t, e.Close(context.Background()))
			r := e.Report(nil)
			for format, write := range writers {
				var b bytes.Buffer
				require.NoError(t, write(&b, r), format)
				require.NotZero(t, b.Len(), format)
				require.False(t, strings.Contains(b.String(), "NaN") && format == "html", "html shows no NaN")
			}
		})
	}
}

// TestPaletteDistinct: the plots' twelve colours stay apart: no two closer
// than 40 in RGB (the nearest pair is 49 apart; Kelly chose them to be told
// apart by eye, which RGB distance only approximates).
func TestPaletteDistinct(t *testing.T) {
	require.Len(t, palette, maxPlotGroups)
	nearest := math.Inf(1)
	for i := range palette {
		for j := range i {
			a, b := palette[i], palette[j]
			dr, dg, db := float64(a.R)-float64(b.R), float64(a.G)-float64(b.G), float64(a.B)-float64(b.B)
			nearest = math.Min(nearest, math.Sqrt(dr*dr+dg*dg+db*db))
		}
	}
	require.Greater(t, nearest, 40.0)
	t.Logf("nearest pair: %.0f apart", nearest)
}
