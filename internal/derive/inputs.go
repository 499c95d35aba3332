// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package derive

import (
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/llmslo/llmslo/internal/preset"
)

// first returns the first slot of slots present on the span.
func first(slots []int, s *scratch) (pcommon.Value, bool) {
	for _, slot := range slots {
		if s.has[slot] {
			return s.vals[slot], true
		}
	}
	return pcommon.Value{}, false
}

func firstTiming(ts []timing, s *scratch) (pcommon.Value, preset.Unit, bool) {
	for _, x := range ts {
		if s.has[x.slot] {
			return s.vals[x.slot], x.unit, true
		}
	}
	return pcommon.Value{}, 0, false
}

// presentAt is the index in ts of the first attribute present on the span
// (the one firstTiming returns); callers know one is present.
func presentAt(ts []timing, s *scratch) int {
	for i, x := range ts {
		if s.has[x.slot] {
			return i
		}
	}
	return 0
}

// timingValue reads the first present attribute of ts. It returns Missing
// and records the reason when the attribute is present but bad.
func timingValue(ts []timing, s *scratch, start uint64, f Field, errs *Errors) (Value, bool) {
	if s.fields&(1<<f) == 0 {
		return Value{}, false
	}
	v, u, ok := firstTiming(ts, s)
	if !ok {
		return Value{}, false
	}
	x, r := parseSeconds(v, u, start)
	if r != NoReason {
		errs.Set(f, r)
		return Value{}, true
	}
	return known(x), true
}

// countValue reads the first present token-count attribute of slots.
// It reports false when none is present or the one present is bad (the
// reason recorded in errs).
func countValue(slots []countSlot, s *scratch, f Field, errs *Errors) (int64, bool) {
	if s.fields&(1<<f) == 0 {
		return 0, false
	}
	var v pcommon.Value
	found := false
	for _, cs := range slots {
		if !s.has[cs.slot] {
			continue
		}
		v, found = s.vals[cs.slot], true
		if cs.field != "" {
			if v, found = jsonField(v, cs.field); !found {
				continue
			}
		}
		break
	}
	if !found {
		return 0, false
	}
	n, r := parseCount(v)
	if r != NoReason {
		errs.Set(f, r)
		return 0, false
	}
	return n, true
}
