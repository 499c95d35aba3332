// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package slo

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// TestLimitsFor: a valid attribute replaces the configured threshold; a
// malformed one keeps it, or makes the constraint undecidable without one.
func TestLimitsFor(t *testing.T) {
	ms := &FromAttribute{Key: "x", Scale: 1e-3}
	withFallback := &SLO{Limits: Limits{TTFT: Threshold{Seconds: 0.2, Set: true}}, From: &Sources{ms}}
	noFallback := &SLO{From: &Sources{ms}}
	tests := []struct {
		name string
		slo  *SLO
		put  func(pcommon.Map)
		want Threshold
		bad  bool
	}{
		{"absent", withFallback, func(pcommon.Map) {}, Threshold{Seconds: 0.2, Set: true}, false},
		{"absent, no fallback", noFallback, func(pcommon.Map) {}, Threshold{}, false},
		{"int", withFallback, func(m pcommon.Map) { m.PutInt("x", 500) }, Threshold{Seconds: 0.5, Set: true}, false},
		{"double", noFallback, func(m pcommon.Map) { m.PutDouble("x", 250) }, Threshold{Seconds: 0.25, Set: true}, false},
		{"string", noFallback, func(m pcommon.Map) { m.PutStr("x", " 100 ") }, Threshold{Seconds: 0.1, Set: true}, false},
		{"header", noFallback, func(m pcommon.Map) { m.PutEmptySlice("x").AppendEmpty().SetStr("300") }, Threshold{Seconds: 0.3, Set: true}, false},
		{"two headers", withFallback, func(m pcommon.Map) {
			s := m.PutEmptySlice("x")
			s.AppendEmpty().SetStr("1")
			s.AppendEmpty().SetStr("2")
		}, Threshold{Seconds: 0.2, Set: true}, true},
		{"word", withFallback, func(m pcommon.Map) { m.PutStr("x", "fast") }, Threshold{Seconds: 0.2, Set: true}, true},
		{"zero", noFallback, func(m pcommon.Map) { m.PutInt("x", 0) }, Threshold{Set: true, Invalid: true}, true},
		{"NaN", noFallback, func(m pcommon.Map) { m.PutStr("x", "NaN") }, Threshold{Set: true, Invalid: true}, true},
		{"beyond a week", noFallback, func(m pcommon.Map) { m.PutDouble("x", 1e12) }, Threshold{Set: true, Invalid: true}, true},
		{"bool", noFallback, func(m pcommon.Map) { m.PutBool("x", true) }, Threshold{Set: true, Invalid: true}, true},
	}
	for _, tt := range tests {
		attrs := pcommon.NewMap()
		tt.put(attrs)
		var l Limits
		bad := tt.slo.LimitsFor(attrs, &l)
		if l.TTFT != tt.want || bad != tt.bad {
			t.Errorf("%s: TTFT %+v, bad %v; want %+v, %v", tt.name, l.TTFT, bad, tt.want, tt.bad)
		}
	}
}
