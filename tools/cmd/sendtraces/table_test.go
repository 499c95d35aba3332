// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

func enriched() ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "litellm-proxy")
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	s := spans.AppendEmpty()
	s.SetName("litellm_request")
	a := s.Attributes()
	a.PutStr("llm.metrics.source", "litellm:span")
	a.PutDouble("llm.e2e", 2.5)
	a.PutInt("llm.output_tokens", 80)
	a.PutBool("llm.slo.batch.met", true)
	a.PutBool("llm.slo.interactive.met", false)
	v := a.PutEmptySlice("llm.slo.interactive.violations")
	for _, c := range []string{"e2e", "ttft:unknown", "tpot:unknown"} {
		v.AppendEmpty().SetStr(c)
	}
	a.PutStr("llm.metrics.error", "ttft:not_emitted")
	other := spans.AppendEmpty()
	other.SetName("embeddings text-embedding-3-small")
	return td
}

func TestTableLayouts(t *testing.T) {
	var wide, narrow bytes.Buffer
	printTable(&wide, []ptrace.Traces{enriched()}, 0)
	assert.Equal(t, `SERVICE        SPAN                               SOURCE                           TTFT  TPOT  ITL mean/max  E2E        N   SLO VERDICTS                                                         ERRORS
litellm-proxy  litellm_request                    litellm:span                     -     -     -/-           2500.00ms  80  batch=met interactive=violated["e2e","ttft:unknown","tpot:unknown"]  ttft:not_emitted
litellm-proxy  embeddings text-embedding-3-small  (not an LLM request: untouched)
`, wide.String())

	printTable(&narrow, []ptrace.Traces{enriched()}, 100)
	assert.Equal(t, `Times in milliseconds; under each span its SLO verdicts and errors.
SERVICE        SPAN                      SOURCE                           TTFT  TPOT  ITL mean/max  E2E   N
litellm-proxy  litellm_request           litellm:span                     -     -     -/-           2500  80
  -> batch=met interactive=violated["e2e","ttft:unknown","tpot:unknown"]; errors: ttft:not_emitted
litellm-proxy  embeddings text-embed...  (not an LLM request: untouched)
`, narrow.String())
}

// TestDemoSamplesFit120: the table make run prints first, on the samples
// scripts/demo.sh sends (as the processor writes them, the goldens), fits
// a 120-column terminal. Its narrow layout was 122-124 columns.
func TestDemoSamplesFit120(t *testing.T) {
	script, err := os.ReadFile("../../../scripts/demo.sh")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^samples=\(([^)]*)\)`).FindSubmatch(script)
	require.NotNil(t, m, "scripts/demo.sh lists its samples in samples=(...)")
	var batches []ptrace.Traces
	for _, s := range strings.Fields(string(m[1])) {
		td, err := golden.ReadTraces(filepath.Join("../../../testdata/traces", s, "expected.yaml"))
		require.NoError(t, err)
		batches = append(batches, td)
	}
	require.Greater(t, len(batches), 10)
	var b bytes.Buffer
	printTable(&b, batches, 120)
	out := b.String()
	require.Contains(t, out, "Times in milliseconds", "the narrow layout")
	for _, line := range strings.Split(out, "\n") {
		assert.LessOrEqual(t, utf8.RuneCountInString(line), 120, "%q", line)
	}
}

// TestDemoReportLeavesOutTheSamples: make run's report is the load's
// alone, so scripts/demo.sh starts the capture it reports on only after
// sendtraces has had its samples back (the samples were mixed into the
// load's groups). The collector does not retry an export the capture
// missed, or the samples would reach it late.
func TestDemoReportLeavesOutTheSamples(t *testing.T) {
	script, err := os.ReadFile("../../../scripts/demo.sh")
	require.NoError(t, err)
	s := string(script)
	samples, capture, load := strings.Index(s, "\nbin/sendtraces "), strings.Index(s, "\nbin/llmslo capture "), strings.Index(s, "\nbin/llmloadgen ")
	require.True(t, samples > 0 && capture > 0 && load > 0, "scripts/demo.sh runs sendtraces, llmslo capture and llmloadgen")
	assert.Less(t, samples, capture, "the capture starts after the samples")
	assert.Less(t, capture, load, "the capture starts before the load")
	demo, err := os.ReadFile("../../../config/demo.yaml")
	require.NoError(t, err)
	assert.Regexp(t, `otlp_http/report:\n    endpoint: http://127.0.0.1:4320\n    retry_on_failure:\n      enabled: false\n`, string(demo))
}
