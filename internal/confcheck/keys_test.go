// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package confcheck

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestShape: every unknown key is named with its path and the nearest key
// of its place, or the keys of that place; a whole number written with a
// fraction is refused. Maps take any key; a Duration's value is left to
// Durations.
func TestShape(t *testing.T) {
	for _, tt := range []struct {
		name string
		raw  map[string]any
		err  string
	}{
		{name: "known keys", raw: map[string]any{"timeout": "1s", "window": "1m", "count": 3, "untagged": "1s",
			"nested": map[string]any{"every": "2s"}, "list": []any{map[string]any{"every": "1s"}},
			"by_name": map[string]any{"anything": map[string]any{"every": "1s"}}}},
		{name: "case slip", raw: map[string]any{"Window": "1m"}, err: "Window: unknown key: did you mean window?"},
		{name: "swapped letters", raw: map[string]any{"nested": map[string]any{"evrey": "1s"}}, err: "nested.evrey: unknown key: did you mean every?"},
		{name: "in a list", raw: map[string]any{"list": []any{map[string]any{}, map[string]any{"ever": "1s"}}}, err: "list[1].ever: unknown key: did you mean every?"},
		{name: "in a map's value", raw: map[string]any{"by_name": map[string]any{"x": map[string]any{"every": "1s", "evry": "1s"}}},
			err: "by_name.x.evry: unknown key: did you mean every?"},
		{name: "squashed field", raw: map[string]any{"timeot": "1s"}, err: "timeot: unknown key: did you mean timeout?"},
		{name: "nothing near", raw: map[string]any{"dimensions": []any{}},
			err: "dimensions: unknown key: the keys here are by_name, count, list, nested, timeout, untagged, window"},
		{name: "ignored field is no key", raw: map[string]any{"-": 1}, err: "-: unknown key: the keys here are by_name, count, list, nested, timeout, untagged, window"},
		{name: "two", raw: map[string]any{"coutn": 1, "windwo": "1s"},
			err: "coutn: unknown key: did you mean count?\nwindwo: unknown key: did you mean window?"},
		{name: "fraction", raw: map[string]any{"count": 1.5}, err: "count: 1.5 is not a whole number"},
		{name: "whole float", raw: map[string]any{"count": 2.0}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := Shape(tt.raw, &sample{})
			if tt.err == "" {
				assert.NoError(t, err)
				return
			}
			assert.EqualError(t, err, tt.err)
		})
	}
}

func TestClosest(t *testing.T) {
	keys := []string{"ttft", "tpot", "e2e", "slos", "attribute_prefix", "window"}
	for _, tt := range []struct {
		word, want string
		ok         bool
	}{
		{"tffT", "ttft", true},
		{"TTFT", "ttft", true},
		{"slo", "slos", true},
		{"attribute_prefx", "attribute_prefix", true},
		{"widnow", "window", true},
		{"e2", "e2e", true},
		{"x", "", false},
		{"dimensions", "", false},
		{"tt", "", false}, // two edits from ttft: too far for a short word
	} {
		got, ok := Closest(tt.word, keys)
		assert.Equal(t, tt.ok, ok, tt.word)
		if tt.ok {
			assert.Equal(t, tt.want, got, tt.word)
		}
	}
}
