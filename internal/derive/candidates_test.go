// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package derive

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/llmslo/llmslo/internal/preset"
)

// TestCandidates: the filter skips only presets that cannot match. Seventy
// presets (more than the bit sets cover) each claim one span name, one
// attribute with given values, or a name substring; every span goes to the
// first preset whose condition holds, whatever its position.
func TestCandidates(t *testing.T) {
	var presets []*preset.Preset
	for i := range 70 {
		var c preset.Cond
		switch i % 3 {
		case 0:
			c = preset.Cond{SpanName: fmt.Sprintf("span-%d", i)}
		case 1:
			c = preset.Cond{Attribute: fmt.Sprintf("attr.%d", i), AttributeValues: []string{"yes"}}
		default:
			c = preset.Cond{SpanNameContains: fmt.Sprintf("<%d>", i)}
		}
		presets = append(presets, &preset.Preset{Name: fmt.Sprint(i), Layer: preset.LayerClient, Match: preset.Match{Any: []preset.Cond{c}}})
	}
	table := NewTable(presets, Options{})
	for _, tt := range []struct {
		name  string
		attrs map[string]any
		want  string // "" when no preset claims the span
	}{
		{"span-0", nil, "0"},
		{"span-66", nil, "66"},
		{"span-69", nil, "69"}, // beyond the bit sets
		{"x", map[string]any{"attr.4": "yes"}, "4"},
		{"x", map[string]any{"attr.4": "no"}, ""},
		{"x", map[string]any{"attr.67": "yes"}, "67"},
		{"a <65> b", nil, "65"},
		{"span-3", map[string]any{"attr.1": "yes"}, "1"},
		{"span-1", nil, ""},
	} {
		var r Result
		ok := table.Derive(newSpan(tt.name, 1, tt.attrs), &r)
		assert.Equal(t, tt.want != "", ok, "%s %v", tt.name, tt.attrs)
		if ok {
			assert.Equal(t, tt.want, r.Preset, "%s %v", tt.name, tt.attrs)
		}
	}
}
