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
