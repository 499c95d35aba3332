// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package derive

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
