// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmslo/llmslo/tools/internal/report/render"
)

// TestHTML renders the generated corpus and checks the plots are there:
// per SLO a sweep and a timeline, a CDF per latency metric, a definitions
// chart per metric id. LLMSLO_HTML=file keeps the page (to open it in a
// browser, or to screenshot with headless Chromium).
func TestHTML(t *testing.T) {
	td := ptrace.NewTraces()
	for _, r := range corpus(3, 800) {
		chat(td, r)
	}
	e, err := NewEngine(context.Background(), goldenOptions(t))
	require.NoError(t, err)
	require.NoError(t, e.Consume(context.Background(), td))
	require.NoError(t, e.Close(context.Background()))
	var b bytes.Buffer
	require.NoError(t, render.WriteHTML(&b, e.Report([]string{"corpus"})))
	page := b.String()
	if out := os.Getenv("LLMSLO_HTML"); out != "" {
		require.NoError(t, os.WriteFile(out, b.Bytes(), 0o644))
	}
	// 2 SLOs x (sweep + timeline + slowest misses' parts) + 4 CDFs (no
	// queue time here) + 4 definitions charts.
	assert.Equal(t, 14, strings.Count(page, "<svg "), "inline SVG plots")
	assert.Greater(t, strings.Count(page, "<path"), 200, "drawn paths")
	for _, title := range []string{"SLO interactive: goodput as every threshold is scaled", "SLO smooth_stream: verdicts over time",
		"SLO interactive: the slowest misses, E2E by part", "Why SLO interactive misses",
		"ttft CDF by group", "itl CDF by group", "&#34;tpot&#34; as each tool defines it"} {
		assert.Contains(t, page, title)
	}
	assert.NotContains(t, page, "<?xml")
	// Self-contained: no URL other than the SVG namespaces.
	urls := regexp.MustCompile(`(?:src|href)=["']?[a-z]+:`).FindAllString(page, -1)
	assert.Empty(t, urls, "no external resources")
	assert.NotContains(t, page, "<script")
}

// TestTextWidth: no line of the text report is wider than 100 columns,
// even with long group names.
func TestTextWidth(t *testing.T) {
	td := ptrace.NewTraces()
	for i, r := range corpus(5, 300) {
		r.model = []string{"llama-3.1-70b-instruct-with-a-very-long-deployment-name", "qwen2.5-1.5b-instruct"}[i%2]
		chat(td, r)
	}
	e, err := NewEngine(context.Background(), goldenOptions(t))
	require.NoError(t, err)
	require.NoError(t, e.Consume(context.Background(), td))
	require.NoError(t, e.Close(context.Background()))
	var b bytes.Buffer
	require.NoError(t, render.WriteText(&b, e.Report([]string{"corpus"})))
	for _, line := range strings.Split(b.String(), "\n") {
		assert.LessOrEqual(t, utf8.RuneCountInString(line), render.Width, line)
	}
}
