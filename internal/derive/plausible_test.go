// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package derive

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmslo/llmslo/internal/preset"
)

// TestPlausibilityRules: each rule turns a value a producer is known to get
// wrong into unknown with its reason, or qualifies it, and leaves a
// plausible value of the same shape alone.
func TestPlausibilityRules(t *testing.T) {
	openlit := func(tokens int, extra ...any) map[string]any {
		a := map[string]any{"gen_ai.operation.name": "chat", "gen_ai.request.is_stream": true,
			"gen_ai.server.time_to_first_token": 0.045, "gen_ai.usage.output_tokens": tokens}
		for i := 0; i+1 < len(extra); i += 2 {
			a[extra[i].(string)] = extra[i+1]
		}
		return a
	}
	semconv := func(tokens int) map[string]any {
		return map[string]any{"gen_ai.operation.name": "chat", "gen_ai.request.stream": true, "gen_ai.usage.output_tokens": tokens}
	}
	responses := map[string]any{"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o-mini"}
	tests := []struct {
		name, scope string
		endMs       float64
		attrs       map[string]any
		events      []ev
		hasN        bool
		n           int64
		e2e         Status
		errs        string
		source      string
	}{
		{"OpenLIT Responses stream, 0 tokens after a first output", "openlit", 210, openlit(0), nil,
			false, 0, Known, "output_tokens:implausible", "openlit:attributes,ttft=first_event"},
		{"1 token, the producer's mean chunk gap shows two chunks", "openlit", 80, openlit(1, "gen_ai.server.time_per_output_token", 0.012), nil,
			false, 0, Known, "output_tokens:implausible", "openlit:attributes,ttft=first_event"},
		{"1 token, the stream open 0.2 s after its first output", "openlit", 245, openlit(1), nil,
			false, 0, Known, "output_tokens:implausible", "openlit:attributes,ttft=first_event"},
		{"1 token, the stream ends at once after it: plausible", "openlit", 60, openlit(1), nil,
			true, 1, Known, "", "openlit:attributes,ttft=first_event"},
		{"1 token in usage, three chunk events", "", 300, semconv(1), []ev{chunk(100, -1), chunk(200, -1), chunk(290, -1)},
			false, 0, Known, "output_tokens:implausible", "openllmetry:events"},
		{"2 tokens: TPOT applies, nothing to refuse", "", 300, semconv(2), []ev{chunk(100, -1), chunk(200, -1), chunk(290, -1)},
			true, 2, Known, "", "openllmetry:events"},
		{"Traceloop Responses stream span ended at create()", "@traceloop/instrumentation-openai", 31, responses, nil,
			false, 0, Missing, "ttft:not_emitted,e2e:implausible,output_tokens:not_emitted", "semconv:span,level=provider"},
		{"Traceloop span with a response id: read to its end", "@traceloop/instrumentation-openai", 620,
			map[string]any{"gen_ai.operation.name": "chat", "gen_ai.response.id": "resp_1"}, nil,
			false, 0, Known, "ttft:not_emitted,output_tokens:not_emitted", "semconv:span,level=provider"},
		{"the same span of another producer: no known defect", "my-app", 31, responses, nil,
			false, 0, Known, "ttft:not_emitted,output_tokens:not_emitted", "semconv:span"},
	}
	table := NewTable(preset.Builtin(), Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r Result
			span := withKind(newSpan("chat gpt-4o-mini", tt.endMs, tt.attrs, tt.events...), ptrace.SpanKindClient)
			require.True(t, table.DeriveIn(span, Scope{Name: tt.scope}, &r))
			assert.Equal(t, tt.hasN, r.HasOutputTokens)
			assert.Equal(t, tt.n, r.OutputTokens)
			assert.Equal(t, tt.e2e, r.E2E.S)
			assert.Equal(t, tt.errs, r.Errors.String())
			assert.Equal(t, tt.source, table.Source(&r))
			if !tt.hasN {
				assert.NotEqual(t, NotApplicable, r.TPOT.S, "no TPOT not applicable from a refused count")
			}
		})
	}
}

// TestTTFTQualified: a qualified TTFT is marked for the SLOs that take it
// as unknown; an unqualified one is not.
func TestTTFTQualified(t *testing.T) {
	table := NewTable(preset.Builtin(), Options{})
	for _, tt := range []struct {
		name      string
		attrs     map[string]any
		qualified bool
	}{
		{"OpenLIT", map[string]any{"gen_ai.request.is_stream": true, "gen_ai.server.time_to_first_token": 0.045}, true},
		{"the conventions' TTFT", map[string]any{"gen_ai.operation.name": "chat", "gen_ai.response.time_to_first_chunk": 0.12}, false},
	} {
		var r Result
		require.True(t, table.DeriveIn(newSpan("chat m", 500, tt.attrs), Scope{}, &r))
		assert.Equal(t, tt.qualified, r.TTFTQualified, tt.name)
	}
}
