// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
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
	assert.Equal(t, `SERVICE        SPAN                      SOURCE                           TTFT ms  TPOT ms  ITL mean/max ms  E2E ms  N
litellm-proxy  litellm_request           litellm:span                     -        -        -/-              2500    80
  -> batch=met interactive=violated["e2e","ttft:unknown","tpot:unknown"]; errors: ttft:not_emitted
litellm-proxy  embeddings text-embed...  (not an LLM request: untouched)
`, narrow.String())
}
