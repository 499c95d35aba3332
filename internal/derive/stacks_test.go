// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package derive

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmslo/llmslo/internal/preset"
)

// TestLevelQualifier: double instrumentation (LangChain.js over an
// instrumented OpenAI client) gives two spans per call; the scope says
// which level wrote each, and a scope that says nothing gives no level.
func TestLevelQualifier(t *testing.T) {
	traceloop := map[string]any{"llm.request.type": "chat", "gen_ai.system": "openai", "gen_ai.request.model": "gpt-4o-mini",
		"gen_ai.usage.completion_tokens": 20}
	openinference := map[string]any{"openinference.span.kind": "LLM", "llm.model_name": "gpt-4o-mini", "llm.token_count.completion": 20}
	tests := []struct {
		name, span, scope string
		attrs             map[string]any
		source, level     string
	}{
		{"Traceloop's LangChain instrumentation", "chat gpt-4o-mini", "@traceloop/instrumentation-langchain", traceloop,
			"openllmetry:span,level=framework", preset.LevelFramework},
		{"Traceloop's OpenAI instrumentation", "chat gpt-4o-mini", "@traceloop/instrumentation-openai", traceloop,
			"openllmetry:span,level=provider", preset.LevelProvider},
		{"OpenInference's LangChain instrumentation", "ChatOpenAI", "@arizeai/openinference-instrumentation-langchain", openinference,
			"openinference:span,level=framework", preset.LevelFramework},
		{"OpenInference's OpenAI instrumentation", "OpenAI Chat Completions", "@arizeai/openinference-instrumentation-openai", openinference,
			"openinference:span,level=provider", preset.LevelProvider},
		{"OpenTelemetry's OpenAI instrumentation", "chat gpt-4o-mini", "@opentelemetry/instrumentation-openai",
			map[string]any{"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini", "gen_ai.usage.output_tokens": 20},
			"semconv:span,level=provider", preset.LevelProvider},
		{"a scope that states no level", "ChatOpenAI", "my-app", openinference, "openinference:span", ""},
	}
	table := NewTable(preset.Builtin(), Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r Result
			require.True(t, table.DeriveIn(newSpan(tt.span, 800, tt.attrs), Scope{Name: tt.scope}, &r))
			assert.Equal(t, tt.source, table.Source(&r))
			assert.Equal(t, tt.level, r.Level)
		})
	}
}

// TestLevelQualifierReused: a Result reused for a span of no level loses
// the previous span's level.
func TestLevelQualifierReused(t *testing.T) {
	table := NewTable(preset.Builtin(), Options{})
	span := newSpan("ChatOpenAI", 800, map[string]any{"openinference.span.kind": "LLM"})
	var r Result
	require.True(t, table.DeriveIn(span, Scope{Name: "@arizeai/openinference-instrumentation-langchain"}, &r))
	require.True(t, table.DeriveIn(span, Scope{Name: "other"}, &r))
	assert.Equal(t, "openinference:span", table.Source(&r))
	assert.Empty(t, r.Level)
}

// TestFirstPartQualifier: a TTFT its producer stamps at the first stream
// part of any kind is qualified ttft=first_part (the value itself is the
// producer's); AI SDK 6 and 7, which stamp the first text part, are told
// from 5 only by the usage details they alone write.
func TestFirstPartQualifier(t *testing.T) {
	sdk := func(extra map[string]any) map[string]any {
		a := map[string]any{"ai.operationId": "ai.streamText.doStream", "ai.response.msToFirstChunk": 65.5, "ai.usage.outputTokens": 21}
		for k, v := range extra {
			a[k] = v
		}
		return a
	}
	langfuse := map[string]any{"langfuse.observation.type": "generation", "langfuse.observation.completion_start_time": `"2026-01-01T00:00:00.070Z"`,
		"langfuse.observation.model.parameters": `{"stream":true}`, "langfuse.observation.usage_details": `{"output": 21}`}
	tests := []struct {
		name, span string
		attrs      map[string]any
		events     []ev
		source     string
		ttft       float64
	}{
		{"AI SDK 5: no usage details, first part", "ai.streamText.doStream", sdk(nil), nil,
			"vercel_ai:attributes,ttft=first_part", 0.0655},
		{"AI SDK 6/7: usage details, first text part", "ai.streamText.doStream",
			sdk(map[string]any{"ai.usage.inputTokenDetails.noCacheTokens": 12, "ai.usage.outputTokenDetails.textTokens": 21}), nil,
			"vercel_ai:attributes", 0.0655},
		{"AI SDK renamed by Traceloop, no evidence of the release", "chat gpt-4o-mini", sdk(nil), nil,
			"vercel_ai:attributes,ttft=first_part", 0.0655},
		{"AI SDK first-chunk event only (AI SDK 5)", "ai.streamText.doStream",
			map[string]any{"ai.operationId": "ai.streamText.doStream", "ai.usage.outputTokens": 21}, []ev{{"ai.stream.firstChunk", 62, -1}},
			"vercel_ai:events,ttft=first_part", 0.062},
		{"AI SDK first-chunk event, AI SDK 6 usage", "ai.streamText.doStream",
			map[string]any{"ai.operationId": "ai.streamText.doStream", "ai.usage.outputTokens": 21, "ai.usage.outputTokenDetails.textTokens": 21},
			[]ev{{"ai.stream.firstChunk", 125, -1}}, "vercel_ai:events", 0.125},
		{"AI SDK span with the conventions' TTFT: not the AI SDK's stamp", "ai.streamText.doStream",
			map[string]any{"ai.operationId": "ai.streamText.doStream", "gen_ai.client.operation.time_to_first_chunk": 0.178, "ai.usage.outputTokens": 21}, nil,
			"vercel_ai:attributes", 0.178},
		{"Langfuse completion_start_time", "OpenAI-generation", langfuse, nil, "langfuse:attributes,ttft=first_part", 0.070},
		{"OpenInference's first-token event is the first token", "ChatCompletion",
			map[string]any{"openinference.span.kind": "LLM", "llm.token_count.completion": 21}, []ev{{"First Token Stream Event", 123, -1}},
			"openinference:events", 0.123},
	}
	table := NewTable(preset.Builtin(), Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r Result
			require.True(t, table.DeriveIn(newSpan(tt.span, 500, tt.attrs, tt.events...), Scope{Name: "ai"}, &r))
			assert.Equal(t, tt.source, table.Source(&r))
			assert.Equal(t, Known, r.TTFT.S)
			assert.InDelta(t, tt.ttft, r.TTFT.V, 1e-9)
		})
	}
}

// TestFirstPartNotStreamed: a non-streamed call has no TTFT, so no
// qualifier, whatever its producer stamps.
func TestFirstPartNotStreamed(t *testing.T) {
	table := NewTable(preset.Builtin(), Options{})
	span := newSpan("ai.generateText.doGenerate", 500, map[string]any{"ai.operationId": "ai.generateText.doGenerate", "ai.usage.outputTokens": 21})
	var r Result
	require.True(t, table.DeriveIn(span, Scope{Name: "ai"}, &r))
	assert.Equal(t, "vercel_ai:span", table.Source(&r))
	assert.Equal(t, NotApplicable, r.TTFT.S)
}

// conventionTTFT is the convention TTFT every pair's span carries.
const conventionTTFT = 0.178

// stackSpec is a span built to satisfy the match conditions of presets.
type stackSpec struct {
	name     string
	contains []string
	kind     ptrace.SpanKind
	scope    string
	attrs    map[string]any
	events   []string
}

// add makes the span satisfy c; false when it cannot, given the
// conditions added before (two span names, two scopes, two kinds, two
// values of one attribute).
func (sp *stackSpec) add(c preset.Cond) bool {
	switch {
	case c.SpanName != "":
		if sp.name != "" && sp.name != c.SpanName {
			return false
		}
		sp.name = c.SpanName
	case c.SpanNameContains != "":
		sp.contains = append(sp.contains, c.SpanNameContains)
	case c.Attribute != "":
		var v any = 0.02
		switch {
		case len(c.AttributeValues) > 0:
			v = c.AttributeValues[0]
		case strings.Contains(c.Attribute, "stream"):
			v = true
		}
		if old, ok := sp.attrs[c.Attribute]; ok && old != v {
			return false
		}
		sp.attrs[c.Attribute] = v
	case c.Event != "":
		sp.events = append(sp.events, c.Event)
	case c.Scope != "":
		if sp.scope != "" && sp.scope != c.Scope {
			return false
		}
		sp.scope = c.Scope
	case c.SpanKind != "":
		k := map[string]ptrace.SpanKind{"internal": ptrace.SpanKindInternal, "client": ptrace.SpanKindClient}[c.SpanKind]
		if sp.kind != ptrace.SpanKindUnspecified && sp.kind != k {
			return false
		}
		sp.kind = k
	}
	return true
}

func (sp *stackSpec) span() ptrace.Span {
	name := sp.name
	if name == "" {
		name = "chat " + strings.Join(sp.contains, "")
	}
	var evs []ev
	for _, e := range sp.events {
		evs = append(evs, ev{e, 50, -1})
	}
	s := newSpan(name, 800, sp.attrs, evs...)
	s.SetKind(sp.kind)
	return s
}

// ownTTFT reports whether a condition names one of the presets' own TTFT
// attributes: then the preset's own value comes first (docs/processor.md, Decisions),
// which is not the rule under test.
func ownTTFT(c preset.Cond, ps ...*preset.Preset) bool {
	for _, p := range ps {
		for _, x := range p.Map.TTFT {
			if c.Attribute == x.Key {
				return true
			}
		}
	}
	return false
}

// stackSpans are the spans both presets claim, alone: one per choice of
// an "any" condition of each, with every "all" condition of both.
func stackSpans(a, b *preset.Preset) []stackSpec {
	var out []stackSpec
	for _, ca := range a.Match.Any {
		for _, cb := range b.Match.Any {
			if ownTTFT(ca, a, b) || ownTTFT(cb, a, b) {
				continue
			}
			sp := stackSpec{attrs: map[string]any{"gen_ai.client.operation.time_to_first_chunk": conventionTTFT, "gen_ai.request.stream": true}}
			ok := sp.add(ca) && sp.add(cb)
			for _, c := range slices.Concat(a.Match.All, b.Match.All) {
				ok = ok && sp.add(c)
			}
			if ok && claims(a, sp) && claims(b, sp) {
				out = append(out, sp)
			}
		}
	}
	return out
}

func claims(p *preset.Preset, sp stackSpec) bool {
	var r Result
	return NewTable([]*preset.Preset{p}, Options{}).DeriveIn(sp.span(), Scope{Name: sp.scope}, &r)
}

// TestConventionTTFTKeptByEveryPair: for every pair of client presets that
// can claim one span (a span built from both presets' match conditions,
// claimed by each alone), the built-in table keeps the conventions' TTFT
// on it whichever preset claims it (docs/processor.md, Decisions: stacked
// instrumentations, evidence over first match). Engine presets read the
// engine's own clock only, so they are not in the pairs.
func TestConventionTTFTKeptByEveryPair(t *testing.T) {
	builtin := preset.Builtin()
	table := NewTable(builtin, Options{})
	var clients []*preset.Preset
	for _, p := range builtin {
		if p.Layer == preset.LayerClient {
			clients = append(clients, p)
		}
	}
	pairs, covered := 0, 0
	for i, a := range clients {
		for _, b := range clients[i+1:] {
			pairs++
			specs := stackSpans(a, b)
			if len(specs) == 0 {
				t.Logf("%s and %s cannot claim one span", a.Name, b.Name)
				continue
			}
			covered++
			for _, sp := range specs {
				var r Result
				require.True(t, table.DeriveIn(sp.span(), Scope{Name: sp.scope}, &r), "%s+%s: %v", a.Name, b.Name, sp)
				first := slices.IndexFunc(builtin, func(p *preset.Preset) bool { return p.Name == a.Name })
				assert.LessOrEqual(t, r.PresetIndex, first, "%s+%s claimed by a later preset %s", a.Name, b.Name, r.Preset)
				assert.Equal(t, k(conventionTTFT), r.TTFT, "%s+%s claimed by %s: %v", a.Name, b.Name, r.Preset, sp)
				assert.Equal(t, FromAttributes, r.Origin, "%s+%s", a.Name, b.Name)
				assert.NotContains(t, table.Source(&r), QualifierTTFTFirstPart, "%s+%s", a.Name, b.Name)
			}
		}
	}
	t.Logf("%d of %d pairs of client presets can claim one span", covered, pairs)
	assert.Equal(t, len(clients)*(len(clients)-1)/2, pairs)
}
