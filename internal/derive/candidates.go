// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package derive

// candidates narrows classification: a preset claims a span only if one of
// its "any" conditions holds, and most of those are an exact span name or
// an attribute's presence, both known before any preset is asked (the span
// name, and the slots the scan filled). A preset none of whose such
// conditions can hold is skipped without testing its conditions one by
// one; the rest are asked in order, with every condition, as before, so
// the preset chosen is the same.
type candidates struct {
	// byName indexes names: nameSets[byName's slot of a name] are the
	// presets with an "any" span-name condition on that name.
	byName   keyIndex
	nameSets []uint64
	// bySlot: per attribute slot, the presets with an "any" presence
	// condition on it (its values are checked when the preset is asked).
	bySlot []uint64
	// always: the presets with an "any" condition of another kind (name
	// contains, scope, kind, event); they are always asked.
	always uint64
}

// maxFiltered is how many presets the bit sets cover; any beyond are
// always asked.
const maxFiltered = 64

// newCandidates indexes the presets' "any" conditions; numAttrs is the
// table's slot count.
func newCandidates(presets []compiled, numAttrs int) candidates {
	c := candidates{bySlot: make([]uint64, numAttrs)}
	names := map[string]int{}
	for i := range presets {
		if i >= maxFiltered {
			break
		}
		bit := uint64(1) << i
		for _, cond := range presets[i].any {
			switch cond.kind {
			case condSpanName:
				slot, ok := names[cond.text]
				if !ok {
					slot = len(c.nameSets)
					names[cond.text] = slot
					c.nameSets = append(c.nameSets, 0)
				}
				c.nameSets[slot] |= bit
			case condAttr:
				c.bySlot[cond.slot] |= bit
			default:
				c.always |= bit
			}
		}
	}
	c.byName = newKeyIndex(names)
	return c
}

// named is the presets with an "any" span-name condition on name.
func (c *candidates) named(name string) uint64 {
	if slot, ok := c.byName.lookup(name); ok {
		return c.nameSets[slot]
	}
	return 0
}
