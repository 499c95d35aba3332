// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package derive

// keyIndex maps the attribute keys the presets read to their slots (and
// the span and event names they match to theirs). It replaces a Go map on
// the hottest loop of the derivation (one lookup per attribute of every
// span): the keys share long prefixes ("gen_ai.usage."),
// so hashing a few bytes near the middle and the end with the length tells
// them apart as well as hashing all of them, at a fraction of the cost.
// It is an open-addressed table at most a quarter full, built once; a
// lookup of an absent key usually stops at an empty entry or at an entry
// whose length differs.
type keyIndex struct {
	entries []keyEntry
	shift   uint
}

type keyEntry struct {
	key  string
	slot int // -1: empty
}

// newKeyIndex indexes slots by key.
func newKeyIndex(slots map[string]int) keyIndex {
	bits := uint(2)
	for 1<<bits < 4*len(slots) {
		bits++
	}
	ix := keyIndex{entries: make([]keyEntry, 1<<bits), shift: 64 - bits}
	for i := range ix.entries {
		ix.entries[i].slot = -1
	}
	mask := len(ix.entries) - 1
	for key, slot := range slots {
		i := ix.home(key)
		for ix.entries[i].slot >= 0 {
			i = (i + 1) & mask
		}
		ix.entries[i] = keyEntry{key: key, slot: slot}
	}
	return ix
}

// home is the entry where a lookup of key starts.
func (ix *keyIndex) home(key string) int {
	return int(keyHash(key) >> ix.shift)
}

// lookup returns the slot of key.
func (ix *keyIndex) lookup(key string) (int, bool) {
	if e := ix.entry(key); e != nil {
		return e.slot, true
	}
	return 0, false
}

// entry returns the entry of key, nil if key is not indexed.
func (ix *keyIndex) entry(key string) *keyEntry {
	mask := len(ix.entries) - 1
	for i := ix.home(key); ; i = (i + 1) & mask {
		e := &ix.entries[i]
		if e.slot < 0 {
			return nil
		}
		if e.key == key {
			return e
		}
	}
}

// keyHash mixes the length, eight bytes around the middle and the last
// eight (Fibonacci hashing: the top bits of the product are well spread).
func keyHash(k string) uint64 {
	n := len(k)
	h := uint64(n)
	if n < 8 {
		for i := 0; i < n; i++ {
			h = h<<8 | uint64(k[i])
		}
	} else {
		h ^= load64(k, n-8) ^ load64(k, n/2-4)*0xff51afd7ed558ccd
	}
	return h * 0x9e3779b97f4a7c15
}

// load64 reads k[i:i+8] little-endian.
func load64(k string, i int) uint64 {
	_ = k[i+7]
	return uint64(k[i]) | uint64(k[i+1])<<8 | uint64(k[i+2])<<16 | uint64(k[i+3])<<24 |
		uint64(k[i+4])<<32 | uint64(k[i+5])<<40 | uint64(k[i+6])<<48 | uint64(k[i+7])<<56
}
