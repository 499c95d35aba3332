// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloprocessor

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/llmslo/llmslo/internal/contract"
	"github.com/llmslo/llmslo/internal/metadata"
)

// callSpan is one span of a wrapper test batch: id and parent are small
// numbers (0: no parent), times in ms from a fixed start.
type callSpan struct {
	id, parent     uint64
	model, op      string
	start, end     int64
	ttft           float64 // the conventions' TTFT, 0 for none
	server         bool
	openinference  bool // an OpenInference LLM span (no operation name)
	streamedNoTTFT bool
}

func spanID(n uint64) pcommon.SpanID {
	var id pcommon.SpanID
	binary.BigEndian.PutUint64(id[:], n)
	return id
}

func callBatch(spans []callSpan) ptrace.Traces {
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
	for _, c := range spans {
		s := ss.Spans().AppendEmpty()
		s.SetTraceID(pcommon.TraceID{1})
		s.SetSpanID(spanID(c.id))
		if c.parent != 0 {
			s.SetParentSpanID(spanID(c.parent))
		}
		s.SetName("call")
		s.SetStartTimestamp(pcommon.Timestamp(1_767_225_600_000_000_000 + c.start*1e6))
		s.SetEndTimestamp(pcommon.Timestamp(1_767_225_600_000_000_000 + c.end*1e6))
		a := s.Attributes()
		switch {
		case c.server:
			a.PutDouble("gen_ai.latency.time_to_first_token", 0.1)
			a.PutDouble("gen_ai.latency.e2e", 0.5)
		case c.openinference:
			a.PutStr("openinference.span.kind", "LLM")
		default:
			a.PutStr("gen_ai.operation.name", c.op)
		}
		a.PutStr("gen_ai.request.model", c.model)
		a.PutInt("gen_ai.usage.output_tokens", 40)
		if c.ttft > 0 {
			a.PutDouble("gen_ai.response.time_to_first_chunk", c.ttft)
		}
		if c.ttft > 0 || c.streamedNoTTFT {
			a.PutBool("gen_ai.request.stream", true)
		}
	}
	return td
}

// outcome is what the processor left on each span: "judged" (a verdict
// key), or its llm.metrics.error when it is not judged.
func outcomes(td ptrace.Traces) map[uint64]string {
	got := map[uint64]string{}
	eachSpan(td, func(s ptrace.Span) {
		sid := s.SpanID()
		id := binary.BigEndian.Uint64(sid[:])
		_, met := s.Attributes().Get("llm.slo.interactive.met")
		_, violations := s.Attributes().Get("llm.slo.interactive.violations")
		switch e, _ := s.Attributes().Get("llm.metrics.error"); {
		case met || violations:
			got[id] = "judged"
		case e.Str() != "":
			got[id] = e.Str()
		default:
			got[id] = "none"
		}
	})
	return got
}

// TestOneCallOneCount: two client LLM spans of one call, the wrapper the
// direct parent, are judged once, on the span with the evidence, whatever
// the instrumentations; spans that are not one call stay two.
func TestOneCallOneCount(t *testing.T) {
	const m = "claude-haiku-4-5"
	tests := []struct {
		name  string
		spans []callSpan
		want  map[uint64]string
	}{
		{"wrapper without TTFT around the SDK's span with it: the SDK's judged",
			[]callSpan{{id: 1, model: m, openinference: true, start: 0, end: 900, streamedNoTTFT: true},
				{id: 2, parent: 1, model: m, op: "chat", start: 3, end: 890, ttft: 0.16}},
			map[uint64]string{1: "span:wraps_judged", 2: "judged"}},
		{"the wrapper has the TTFT, the inner span not: the wrapper judged",
			[]callSpan{{id: 1, model: m, op: "chat", start: 0, end: 900, ttft: 0.16},
				{id: 2, parent: 1, model: m, op: "chat", start: 3, end: 890, streamedNoTTFT: true}},
			map[uint64]string{1: "judged", 2: "span:inside_judged"}},
		{"equal evidence: the inner span judged",
			[]callSpan{{id: 1, model: m, op: "chat", start: 0, end: 900, ttft: 0.17},
				{id: 2, parent: 1, model: m, op: "chat", start: 3, end: 890, ttft: 0.16}},
			map[uint64]string{1: "span:wraps_judged", 2: "judged"}},
		{"another model: two calls",
			[]callSpan{{id: 1, model: m, op: "chat", start: 0, end: 900, ttft: 0.17},
				{id: 2, parent: 1, model: "gpt-4o-mini", op: "chat", start: 3, end: 890, ttft: 0.16}},
			map[uint64]string{1: "judged", 2: "judged"}},
		{"another operation: two calls",
			[]callSpan{{id: 1, model: m, op: "chat", start: 0, end: 900, ttft: 0.17},
				{id: 2, parent: 1, model: m, op: "text_completion", start: 3, end: 890, ttft: 0.16}},
			map[uint64]string{1: "judged", 2: "judged"}},
		{"the child ends after its parent: two calls",
			[]callSpan{{id: 1, model: m, op: "chat", start: 0, end: 900, ttft: 0.17},
				{id: 2, parent: 1, model: m, op: "chat", start: 3, end: 950, ttft: 0.16}},
			map[uint64]string{1: "judged", 2: "judged"}},
		{"a wrapper of two calls (a retry): each call judged, the wrapper not",
			[]callSpan{{id: 1, model: m, op: "chat", start: 0, end: 2000, streamedNoTTFT: true},
				{id: 2, parent: 1, model: m, op: "chat", start: 3, end: 500, ttft: 0.16},
				{id: 3, parent: 1, model: m, op: "chat", start: 600, end: 1900, ttft: 0.15}},
			map[uint64]string{1: "span:wraps_judged", 2: "judged", 3: "judged"}},
		{"a chain of three, evidence at both ends: the innermost judged",
			[]callSpan{{id: 1, model: m, op: "chat", start: 0, end: 900, ttft: 0.18},
				{id: 2, parent: 1, model: m, op: "chat", start: 2, end: 890, streamedNoTTFT: true},
				{id: 3, parent: 2, model: m, op: "chat", start: 4, end: 880, ttft: 0.16}},
			map[uint64]string{1: "span:wraps_judged", 2: "span:wraps_judged", 3: "judged"}},
		{"an engine span under a client span: two layers, two counts",
			[]callSpan{{id: 1, model: m, op: "chat", start: 0, end: 900, ttft: 0.17},
				{id: 2, parent: 1, model: m, server: true, start: 3, end: 890}},
			map[uint64]string{1: "judged", 2: "judged"}},
		{"a span naming itself its parent: judged alone",
			[]callSpan{{id: 1, parent: 1, model: m, op: "chat", start: 0, end: 900, ttft: 0.17}},
			map[uint64]string{1: "judged"}},
	}
	for _, assembly := range []bool{false, true} {
		cfg, err := loadConfig(t, "golden")
		require.NoError(t, err)
		cfg.TraceAssembly.Enabled = assembly
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%s/trace_assembly=%v", tt.name, assembly), func(t *testing.T) {
				assert.Equal(t, tt.want, outcomes(processWith(t, cfg, processortest.NewNopSettings(metadata.Type), callBatch(tt.spans))))
			})
		}
	}
}

// TestNotJudgedCarriesNothingElse: a span of a call judged on another
// carries no key of the processor but its reason, so a connector, which
// counts spans with llm.metrics.source, does not count it; a forged key on
// it is removed.
func TestNotJudgedCarriesNothingElse(t *testing.T) {
	td := callBatch([]callSpan{{id: 1, model: "m", openinference: true, start: 0, end: 900, streamedNoTTFT: true},
		{id: 2, parent: 1, model: "m", op: "chat", start: 3, end: 890, ttft: 0.16}})
	wrapper := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	wrapper.Attributes().PutBool("llm.slo.interactive.met", true)
	out := process(t, "golden", td)
	got := out.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes().AsRaw()
	owned := map[string]any{}
	keys := contract.NewKeys(contract.DefaultPrefix)
	for k, v := range got {
		if keys.Owns(k) {
			owned[k] = v
		}
	}
	assert.Equal(t, map[string]any{"llm.metrics.error": "span:wraps_judged"}, owned)
}

// TestOneCallHostile: forged parent links (a chain of 20,000 wrappers, a
// cycle, repeated span IDs, a star of 5,000 children) cost linear work
// and leave each span with exactly one outcome.
func TestOneCallHostile(t *testing.T) {
	const chain = 20000
	var spans []callSpan
	for i := uint64(1); i <= chain; i++ {
		spans = append(spans, callSpan{id: i, parent: i - 1, model: "m", op: "chat", start: int64(i), end: int64(2*chain - i), streamedNoTTFT: true})
	}
	// A cycle: each the other's parent, the same times.
	spans = append(spans, callSpan{id: 100001, parent: 100002, model: "m", op: "chat", start: 0, end: 10, ttft: 0.001},
		callSpan{id: 100002, parent: 100001, model: "m", op: "chat", start: 0, end: 10, ttft: 0.001})
	// A star.
	spans = append(spans, callSpan{id: 200000, model: "m", op: "chat", start: 0, end: 100000})
	for i := uint64(1); i <= 5000; i++ {
		spans = append(spans, callSpan{id: 200000 + i, parent: 200000, model: "m", op: "chat", start: 1, end: 99999, ttft: 0.001})
	}
	// The same span ID twice.
	spans = append(spans, callSpan{id: 300000, model: "m", op: "chat", start: 0, end: 900, ttft: 0.1},
		callSpan{id: 300000, parent: 300000, model: "m", op: "chat", start: 1, end: 800, ttft: 0.1})
	got := outcomes(process(t, "golden", callBatch(spans)))
	judged := 0
	for i := uint64(1); i <= chain; i++ {
		if got[i] == "judged" {
			judged++
		} else {
			require.Equal(t, "span:wraps_judged", got[i], "span %d", i)
		}
	}
	assert.Equal(t, 1, judged, "one call in the chain")
	assert.Equal(t, "judged", got[chain], "the innermost of equal evidence")
	assert.Equal(t, "judged", got[100001])
	assert.Equal(t, "judged", got[100002])
	assert.Equal(t, "span:wraps_judged", got[200000])
	for i := uint64(1); i <= 5000; i++ {
		require.Equal(t, "judged", got[200000+i])
	}
}
