// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package slo

import (
	"slices"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/llmslo/llmslo/internal/derive"
	"github.com/llmslo/llmslo/internal/preset"
)

// AttributeMatch holds when the attribute Key, looked up on the span and
// then on its resource, is a string equal to one of Values.
type AttributeMatch struct {
	Key    string
	Values []string
}

// Selector restricts an SLO to some requests. The zero Selector selects
// every LLM request span. Every set part must hold.
type Selector struct {
	// Layer, if set, is "client" or "server".
	Layer string
	// Presets, if set, lists the producer presets selected.
	Presets []string
	// Models, if set, lists the resolved model names selected.
	Models []string
	// Levels, if set, lists the instrumentation levels selected
	// (preset.LevelNames): a span's Result.Level, LevelUnstated for none.
	// With a framework and its provider SDK both instrumented, one of
	// them counts each request once.
	Levels     []string
	Attributes []AttributeMatch
	// InputTokens and OutputTokens, if set, bound the request's derived
	// token counts, so one workload can have an SLO per prompt or answer
	// size (a long prompt's prefill is slower, and a bound fit for it would
	// hide a short prompt's misses).
	InputTokens, OutputTokens TokenRange
}

// TokenRange is an inclusive bound on a token count. The zero TokenRange
// bounds nothing. A set range holds only for a known count: a request
// whose count is unknown cannot be shown to lie in it, and guessing would
// put it in the SLO of one size or the other at random.
type TokenRange struct {
	Set bool
	// Min and Max are inclusive; an open end is 0 or math.MaxInt64.
	Min, Max int64
}

// Holds reports whether the range admits count n, known says whether the
// request has a count at all.
func (t TokenRange) Holds(n int64, known bool) bool {
	return !t.Set || known && n >= t.Min && n <= t.Max
}

// Selects reports whether the request belongs to the SLO.
func (s *Selector) Selects(r *derive.Result, model string, span, resource pcommon.Map) bool {
	if s.Layer != "" && s.Layer != r.Layer {
		return false
	}
	if len(s.Presets) > 0 && !slices.Contains(s.Presets, r.Preset) {
		return false
	}
	if len(s.Models) > 0 && !slices.Contains(s.Models, model) {
		return false
	}
	if len(s.Levels) > 0 && !slices.Contains(s.Levels, levelOf(r)) {
		return false
	}
	if !s.InputTokens.Holds(r.InputTokens, r.HasInputTokens) || !s.OutputTokens.Holds(r.OutputTokens, r.HasOutputTokens) {
		return false
	}
	for _, m := range s.Attributes {
		v, ok := span.Get(m.Key)
		if !ok {
			v, ok = resource.Get(m.Key)
		}
		if !ok || v.Type() != pcommon.ValueTypeStr || !slices.Contains(m.Values, v.Str()) {
			return false
		}
	}
	return true
}

// levelOf is the level a selector matches: the span's, or LevelUnstated.
func levelOf(r *derive.Result) string {
	if r.Level == "" {
		return preset.LevelUnstated
	}
	return r.Level
}
