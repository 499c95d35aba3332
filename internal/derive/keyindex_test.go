// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package derive

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/llmslo/llmslo/internal/contract"
	"github.com/llmslo/llmslo/internal/preset"
)

// TestKeyIndex: every key the built-in presets read is found at its slot,
// and keys that differ from one only in length, in a byte the hash does not
// read, or in the prefix the keys share are not found.
func TestKeyIndex(t *testing.T) {
	keys := contract.NewKeys("llm.")
	table := NewTable(preset.Builtin(), Options{OwnedPrefix: keys.Prefix, Owned: keys.Owns})
	ix := &table.attrIndex
	assert.GreaterOrEqual(t, len(ix.entries), 4*len(table.attrSlot))
	for key, want := range table.attrSlot {
		got, ok := ix.lookup(key)
		assert.True(t, ok, key)
		assert.Equal(t, want, got, key)
		for _, other := range []string{key + "x", "x" + key, key[:len(key)-1], flip(key, 0), flip(key, len(key)/3)} {
			if _, known := table.attrSlot[other]; known {
				continue
			}
			_, ok := ix.lookup(other)
			assert.False(t, ok, "%q is not a key", other)
		}
	}
	for _, absent := range []string{"", "a", "gen_ai.", "http.route", "gen_ai.usage.total_tokens", "gen_ai.request.temperature"} {
		_, ok := ix.lookup(absent)
		assert.False(t, ok, absent)
	}
}

// TestKeyIndexCollisions: keys built to share length, middle and end (so
// one home entry) are all found, each at its own slot.
func TestKeyIndexCollisions(t *testing.T) {
	slots := map[string]int{}
	for i := range 40 {
		slots[fmt.Sprintf("k%02d.middle.ends_the_same", i)] = i
	}
	ix := newKeyIndex(slots)
	home := ix.home("k00.middle.ends_the_same")
	for key, want := range slots {
		assert.Equal(t, home, ix.home(key), key)
		got, ok := ix.lookup(key)
		assert.True(t, ok, key)
		assert.Equal(t, want, got, key)
	}
	_, ok := ix.lookup("k99.middle.ends_the_same")
	assert.False(t, ok)
}

func flip(s string, i int) string {
	b := []byte(s)
	b[i] ^= 0x20
	return string(b)
}
