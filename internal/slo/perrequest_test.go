// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package slo

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/llmslo/llmslo/internal/derive"
)

// TestLimitsFor: a valid attribute replaces the configured threshold; a
// malformed one, or one looser than the source's Max, keeps it, or makes the
// constraint undecidable without one.
func TestLimitsFor(t *testing.T) {
	ms := &FromAttribute{Key: "x", Scale: 1e-3, Max: 1}
	week := &FromAttribute{Key: "x", Scale: 1e-3, Max: derive.MaxSeconds}
	withFallback := &SLO{Limits: Limits{TTFT: Threshold{Seconds: 0.2, Set: true}}, From: &Sources{ms}}
	noFallback := &SLO{From: &Sources{ms}}
	loose := &SLO{From: &Sources{week}}
	const (
		ok       = derive.NoReason
		invalid  = derive.InvalidValue
		tooLoose = derive.OutOfRange
	)
	tests := []struct {
		name string
		slo  *SLO
		put  func(pcommon.Map)
		want Threshold
		bad  derive.Reason
	}{
		{"absent", withFallback, func(pcommon.Map) {}, Threshold{Seconds: 0.2, Set: true}, ok},
		{"absent, no fallback", noFallback, func(pcommon.Map) {}, Threshold{}, ok},
		{"int", withFallback, func(m pcommon.Map) { m.PutInt("x", 500) }, Threshold{Seconds: 0.5, Set: true}, ok},
		{"double", noFallback, func(m pcommon.Map) { m.PutDouble("x", 250) }, Threshold{Seconds: 0.25, Set: true}, ok},
		{"string", noFallback, func(m pcommon.Map) { m.PutStr("x", " 100 ") }, Threshold{Seconds: 0.1, Set: true}, ok},
		{"header", noFallback, func(m pcommon.Map) { m.PutEmptySlice("x").AppendEmpty().SetStr("300") }, Threshold{Seconds: 0.3, Set: true}, ok},
		{"two headers", withFallback, func(m pcommon.Map) {
			s := m.PutEmptySlice("x")
			s.AppendEmpty().SetStr("1")
			s.AppendEmpty().SetStr("2")
		}, Threshold{Seconds: 0.2, Set: true}, invalid},
		{"word", withFallback, func(m pcommon.Map) { m.PutStr("x", "fast") }, Threshold{Seconds: 0.2, Set: true}, invalid},
		{"zero", noFallback, func(m pcommon.Map) { m.PutInt("x", 0) }, Threshold{Set: true, Invalid: true}, invalid},
		{"NaN", noFallback, func(m pcommon.Map) { m.PutStr("x", "NaN") }, Threshold{Set: true, Invalid: true}, invalid},
		{"bool", noFallback, func(m pcommon.Map) { m.PutBool("x", true) }, Threshold{Set: true, Invalid: true}, invalid},
		{"at max", withFallback, func(m pcommon.Map) { m.PutInt("x", 1000) }, Threshold{Seconds: 1, Set: true}, ok},
		{"above max", withFallback, func(m pcommon.Map) { m.PutInt("x", 1001) }, Threshold{Seconds: 0.2, Set: true}, tooLoose},
		{"a week asked, max 1s", withFallback, func(m pcommon.Map) { m.PutInt("x", 604_800_000) }, Threshold{Seconds: 0.2, Set: true}, tooLoose},
		{"above max, no fallback", noFallback, func(m pcommon.Map) { m.PutInt("x", 5000) }, Threshold{Set: true, Invalid: true}, tooLoose},
		{"beyond a week", loose, func(m pcommon.Map) { m.PutDouble("x", 1e12) }, Threshold{Set: true, Invalid: true}, tooLoose},
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
