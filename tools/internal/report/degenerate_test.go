// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmslo/llmslo/tools/internal/report/render"
	"github.com/llmslo/llmslo/tools/internal/report/schema"
)

// TestDegenerateInputs: inputs whose values a log axis or a range cannot
// hold (one request, identical values, zeros, a sub-millisecond queue
// time, no LLM span at all) give a report in every format. Before, the HTML
// report panicked on the first three ("Values must be greater than 0 for a
// log scale").
func TestDegenerateInputs(t *testing.T) {
	writers := map[string]func(io.Writer, *Report) error{
		"text": render.WriteText, "markdown": render.WriteMarkdown, "json": render.WriteJSON, "html": render.WriteHTML,
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

// TestMaxGroups: past MaxGroups, the requests of new groups are counted in
// the one overflow group, listed last, every request still in the SLO's
// totals, and every format says so.
func TestMaxGroups(t *testing.T) {
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	for i, model := range []string{"m3", "m1", "m2", "m1", "m4", "m3"} {
		s := spans.AppendEmpty()
		s.SetName("llm_request")
		s.SetStartTimestamp(1e18)
		s.SetEndTimestamp(pcommon.Timestamp(1e18 + 1e9 + 1e6*uint64(i)))
		s.Attributes().PutStr("gen_ai.request.model", model)
		s.Attributes().PutDouble("gen_ai.latency.time_to_first_token", 0.1)
	}
	opts := goldenOptions(t)
	opts.By, opts.MaxGroups = []string{"model"}, 3
	e, err := NewEngine(context.Background(), opts)
	require.NoError(t, err)
	require.NoError(t, e.Consume(context.Background(), td))
	require.NoError(t, e.Close(context.Background()))
	r := e.Report(nil)
	require.Equal(t, int64(2), r.OverflowRequests, "m2 and m4, past m3 and m1")
	var got []string
	var requests []int64
	for _, g := range r.Latency {
		got = append(got, r.GroupName(g.Group))
		requests = append(requests, g.Requests)
	}
	require.Equal(t, []string{"all", "m1", "m3", "(other groups)"}, got)
	require.Equal(t, []int64{6, 2, 2, 2}, requests)
	require.Equal(t, schema.Group{"otel.metric.overflow": "true"}, r.Latency[3].Group)
	require.Equal(t, int64(6), r.SLOs[0].Groups[0].Requests)
	note := `More than 2 groups: the 2 requests of the rest are reported together as "(other groups)" (raise --max-groups, or group by fewer dimensions).`
	for format, write := range map[string]func(io.Writer, *Report) error{"text": render.WriteText, "markdown": render.WriteMarkdown, "html": render.WriteHTML} {
		var b bytes.Buffer
		require.NoError(t, write(&b, r), format)
		text := b.String()
		if format == "html" {
			text = strings.ReplaceAll(text, "&#34;", `"`)
		}
		require.Contains(t, strings.Join(strings.Fields(text), " "), note, format)
	}
}
