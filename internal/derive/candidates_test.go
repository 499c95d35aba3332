// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package derive

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/ptrace"

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

// TestHasEvent: event conditions scan a span's events once, lazily, and
// only as far as the answer needs. Three presets claim a span by an event
// each (a, b, c); a span goes to the first whose event it has, and the
// scan stops at that event: scanned is how many events were read.
func TestHasEvent(t *testing.T) {
	var presets []*preset.Preset
	for _, e := range []string{"a", "b", "c"} {
		presets = append(presets, &preset.Preset{Name: e, Layer: preset.LayerClient,
			Match: preset.Match{Any: []preset.Cond{{Event: e}}}})
	}
	table := NewTable(presets, Options{})
	for _, tt := range []struct {
		events  []string
		want    string // "" when no preset claims the span
		scanned int
	}{
		{[]string{"a", "a", "a", "b"}, "a", 1},
		{[]string{"x", "x", "b", "a"}, "a", 4},      // a asked first: the whole scan
		{[]string{"x", "b", "b", "c"}, "b", 4},      // b seen while looking for a
		{[]string{"x", "x", "c", "c", "c"}, "c", 5}, // a and b absent: one walk, c seen in it
		{[]string{"x", "y", "x"}, "", 3},            // none: one walk
		{[]string{}, "", 0},
	} {
		span := newSpan("s", 1, nil)
		for _, e := range tt.events {
			span.Events().AppendEmpty().SetName(e)
		}
		s := table.getScratch()
		view := spanView{name: span.Name(), span: span, t: table}
		got := ""
		for i := range table.presets {
			if table.presets[i].matches(&view, s) {
				got = table.presets[i].p.Name
				break
			}
		}
		assert.Equal(t, tt.want, got, "%v", tt.events)
		assert.Equal(t, tt.scanned, s.scanned, "%v", tt.events)
		table.putScratch(s)
	}
}

// TestSlotOfRemembersPositions: the scan remembers which indexed key it
// found at each attribute position, for the next span. Spans whose keys
// come in the same order, in another order, with a key of the same length
// in a remembered position, with an unindexed key there, or past the
// positions remembered, each scan as they would with nothing remembered.
func TestSlotOfRemembersPositions(t *testing.T) {
	table := NewTable(preset.Builtin(), Options{})
	keys := []string{"gen_ai.usage.input_tokens", "gen_ai.request.model", "gen_ai.usage.output_tokens", "llm.usage.total_tokens"}
	long := make([]string, 0, seenKeys+4)
	for i := range seenKeys + 4 {
		long = append(long, fmt.Sprintf("x.%d", i))
	}
	long = append(long, keys...)
	orders := [][]string{
		keys, keys,
		{keys[2], keys[0], keys[1], keys[3]},
		{"gen_ai.usage.input_token_", keys[1], keys[2]}, // same length as keys[0], not indexed
		{keys[1], "gen_ai.usage.input_tokens", keys[0]}, // a repeated key counts once
		long, long,
		keys,
	}
	s := table.getScratch()
	defer table.pool.Put(s)
	for i, order := range orders {
		span := ptrace.NewSpan()
		for j, k := range order {
			span.Attributes().PutInt(k, int64(j+1))
		}
		table.scan(span, s)
		fresh := make([]bool, len(s.has))
		want := map[int]int64{}
		for k, v := range span.Attributes().All() {
			if slot, ok := table.attrIndex.lookup(k); ok && !fresh[slot] {
				fresh[slot], want[slot] = true, v.Int()
			}
		}
		assert.Equal(t, fresh, s.has, "span %d", i)
		for slot, v := range want {
			assert.Equal(t, v, s.vals[slot].Int(), "span %d slot %d", i, slot)
		}
		clearScratch(s)
	}
}
