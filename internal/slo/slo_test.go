// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package slo

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/llmslo/llmslo/internal/contract"
	"github.com/llmslo/llmslo/internal/derive"
)

func lim(s float64) Threshold  { return Threshold{Seconds: s, Set: true} }
func k(v float64) derive.Value { return derive.Value{V: v, S: derive.Known} }

var na = derive.Value{S: derive.NotApplicable}

func TestJudge(t *testing.T) {
	// interactive: ttft <= 0.5 s, tpot <= 0.015 s, e2e <= 2 s.
	s := New("interactive", Limits{TTFT: lim(0.5), TPOT: lim(0.015), E2E: lim(2)}, Selector{})
	tests := []struct {
		name       string
		res        derive.Result
		decided    bool
		met        bool
		violations []string
	}{
		{"all hold", derive.Result{TTFT: k(0.2), TPOT: k(0.01), E2E: k(1.5)}, true, true, nil},
		{"inclusive at the threshold", derive.Result{TTFT: k(0.5), TPOT: k(0.015), E2E: k(2)}, true, true, nil},
		{"one over", derive.Result{TTFT: k(0.5000001), TPOT: k(0.01), E2E: k(1)}, true, false, []string{"ttft"}},
		{"two over", derive.Result{TTFT: k(0.6), TPOT: k(0.01), E2E: k(3)}, true, false, []string{"ttft", "e2e"}},
		{"TPOT not applicable holds", derive.Result{TTFT: k(0.1), TPOT: na, E2E: k(0.1)}, true, true, nil},
		{"TTFT missing is unknown", derive.Result{TPOT: k(0.01), E2E: k(1)}, false, false, []string{"ttft:unknown"}},
		{"missing and violated is violated", derive.Result{TPOT: k(0.02), E2E: k(1)}, true, false, []string{"tpot", "ttft:unknown"}},
		{"error span never meets", derive.Result{Failed: true, TTFT: k(0.1), TPOT: k(0.01), E2E: k(1)}, true, false, []string{"error"}},
		{"error span keeps its other violations", derive.Result{Failed: true, E2E: k(5)}, true, false, []string{"error", "e2e"}},
		{"unconstrained values are ignored", derive.Result{TTFT: k(0.1), TPOT: k(0.01), E2E: k(1), ITLMax: k(100)}, true, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v Verdict
			s.Judge(&tt.res, &v)
			assert.Equal(t, tt.decided, v.Decided)
			assert.Equal(t, tt.met, v.Met)
			if tt.violations == nil {
				assert.Empty(t, v.Violations)
			} else {
				assert.Equal(t, tt.violations, v.Violations)
			}
		})
	}
}

// TestGoodputExample is the reference's vLLM goodput example (§11.1):
// ttft <= 200 ms and tpot <= 50 ms; R5 failed; good = 3 of the 5 completed.
func TestGoodputExample(t *testing.T) {
	s := New("g", Limits{TTFT: lim(0.2), TPOT: lim(0.05)}, Selector{})
	reqs := []derive.Result{
		{TTFT: k(0.150), TPOT: k(0.040)},
		{TTFT: k(0.250), TPOT: k(0.030)},
		{TTFT: k(0.100), TPOT: k(0.060)},
		{TTFT: k(0.180), TPOT: na},
		{Failed: true},
		{TTFT: k(0.200), TPOT: k(0.050)},
	}
	met := 0
	for i := range reqs {
		var v Verdict
		s.Judge(&reqs[i], &v)
		if v.Met {
			met++
		}
	}
	assert.Equal(t, 3, met)
}

func TestSelector(t *testing.T) {
	span, resource := pcommon.NewMap(), pcommon.NewMap()
	span.PutStr("tenant", "acme")
	resource.PutStr("deployment.environment.name", "production")
	res := &derive.Result{Layer: "server", Preset: "vllm"}
	tests := []struct {
		name string
		sel  Selector
		want bool
	}{
		{"empty selects all", Selector{}, true},
		{"layer", Selector{Layer: "server"}, true},
		{"other layer", Selector{Layer: "client"}, false},
		{"preset", Selector{Presets: []string{"sglang", "vllm"}}, true},
		{"model", Selector{Models: []string{"llama"}}, true},
		{"other model", Selector{Models: []string{"qwen"}}, false},
		{"span attribute", Selector{Attributes: []AttributeMatch{{Key: "tenant", Values: []string{"acme"}}}}, true},
		{"resource attribute", Selector{Attributes: []AttributeMatch{{Key: "deployment.environment.name", Values: []string{"production"}}}}, true},
		{"absent attribute", Selector{Attributes: []AttributeMatch{{Key: "team", Values: []string{"x"}}}}, false},
		{"all parts must hold", Selector{Layer: "server", Models: []string{"qwen"}}, false},
		{"no level is unstated", Selector{Levels: []string{"provider", "unstated"}}, true},
		{"unstated not listed", Selector{Levels: []string{"framework", "provider"}}, false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.sel.Selects(res, "llama", span, resource), tt.name)
	}
	for _, tt := range []struct {
		level string
		sel   []string
		want  bool
	}{
		{"framework", []string{"provider", "unstated"}, false},
		{"provider", []string{"provider", "unstated"}, true},
		{"framework", []string{"framework"}, true},
		{"provider", []string{"framework"}, false},
	} {
		r := &derive.Result{Layer: "client", Preset: "openinference", Level: tt.level}
		sel := Selector{Levels: tt.sel}
		assert.Equal(t, tt.want, sel.Selects(r, "llama", span, resource), "level %s, selector %v", tt.level, tt.sel)
	}
}

// TestSelectorTokens: token bounds are inclusive at both ends, an open end
// is unbounded, and a request whose count is unknown matches no selector
// that bounds that count (but still any that bounds only the other).
func TestSelectorTokens(t *testing.T) {
	span, resource := pcommon.NewMap(), pcommon.NewMap()
	upTo := func(n int64) TokenRange { return TokenRange{Set: true, Max: n} }
	from := func(n int64) TokenRange { return TokenRange{Set: true, Min: n, Max: math.MaxInt64} }
	between := func(lo, hi int64) TokenRange { return TokenRange{Set: true, Min: lo, Max: hi} }
	known := func(in, out int64) *derive.Result {
		return &derive.Result{InputTokens: in, HasInputTokens: true, OutputTokens: out, HasOutputTokens: true}
	}
	tests := []struct {
		name string
		sel  Selector
		res  *derive.Result
		want bool
	}{
		{"unset selects an unknown count", Selector{}, &derive.Result{}, true},
		{"input at max", Selector{InputTokens: upTo(1024)}, known(1024, 10), true},
		{"input above max", Selector{InputTokens: upTo(1024)}, known(1025, 10), false},
		{"input at min", Selector{InputTokens: from(1025)}, known(1025, 10), true},
		{"input below min", Selector{InputTokens: from(1025)}, known(1024, 10), false},
		{"zero input at max 0", Selector{InputTokens: upTo(0)}, known(0, 10), true},
		{"input inside both bounds", Selector{InputTokens: between(100, 200)}, known(150, 10), true},
		{"input equal bounds", Selector{InputTokens: between(150, 150)}, known(150, 10), true},
		{"input beside equal bounds", Selector{InputTokens: between(150, 150)}, known(151, 10), false},
		{"unknown input, bounded", Selector{InputTokens: upTo(1024)}, &derive.Result{OutputTokens: 5, HasOutputTokens: true}, false},
		{"unknown input, min 0", Selector{InputTokens: from(0)}, &derive.Result{}, false},
		{"unknown input, only output bounded", Selector{OutputTokens: upTo(10)}, &derive.Result{OutputTokens: 5, HasOutputTokens: true}, true},
		{"output at max", Selector{OutputTokens: upTo(256)}, known(10, 256), true},
		{"output above max", Selector{OutputTokens: upTo(256)}, known(10, 257), false},
		{"output below min", Selector{OutputTokens: from(257)}, known(10, 256), false},
		{"unknown output, bounded", Selector{OutputTokens: from(1)}, &derive.Result{InputTokens: 5, HasInputTokens: true}, false},
		{"both bounds hold", Selector{InputTokens: upTo(1024), OutputTokens: from(100)}, known(1000, 100), true},
		{"input holds, output does not", Selector{InputTokens: upTo(1024), OutputTokens: from(100)}, known(1000, 99), false},
		{"tokens and layer must both hold", Selector{Layer: "server", InputTokens: upTo(1024)}, known(10, 10), false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.sel.Selects(tt.res, "llama", span, resource), tt.name)
	}
}

// TestConstraintOrder: the judge's table is in the contract's order, which
// violations, the connector's violation words and the report's verdict bits
// follow.
func TestConstraintOrder(t *testing.T) {
	assert.Equal(t, contract.Constraints[:], Names())
}

// TestLimitsAt: At reaches each constraint's own field, in the order of
// Names, so per-request thresholds and the configuration land where the
// judge reads them.
func TestLimitsAt(t *testing.T) {
	want := Limits{TTFT: lim(1), TPOT: lim(2), ITL: lim(3), E2E: lim(4), QueueTime: lim(5)}
	var got Limits
	for i := range contract.NumConstraints {
		*got.At(i) = lim(float64(i + 1))
	}
	assert.Equal(t, want, got)
	assert.Equal(t, []Threshold{lim(1), lim(2), lim(3), lim(4), lim(5)}, got.Ordered())
}

// TestQualifiedTTFT: an SLO with qualified_ttft: unknown takes a qualified
// TTFT, and the TPOT from it, as unknown; an unqualified one, and the other
// constraints, are judged as ever.
func TestQualifiedTTFT(t *testing.T) {
	ttft, tpot, e2e := derive.Value{V: 0.05, S: derive.Known}, derive.Value{V: 0.02, S: derive.Known}, derive.Value{V: 1.0, S: derive.Known}
	limits := Limits{TTFT: Threshold{Seconds: 0.5, Set: true}, TPOT: Threshold{Seconds: 0.03, Set: true}, E2E: Threshold{Seconds: 0.9, Set: true}}
	tests := []struct {
		name               string
		unknown, qualified bool
		decided, met       bool
		violations         []string
	}{
		{"keep: judged as given", false, true, true, false, []string{E2E}},
		{"unknown: qualified TTFT and TPOT unknown, the E2E miss still decides", true, true, true, false, []string{E2E, "ttft:unknown", "tpot:unknown"}},
		{"unknown on an unqualified TTFT: judged", true, false, true, false, []string{E2E}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New("x", limits, Selector{})
			s.QualifiedTTFTUnknown = tt.unknown
			r := derive.Result{TTFT: ttft, TPOT: tpot, E2E: e2e, TTFTQualified: tt.qualified}
			var v Verdict
			s.Judge(&r, &v)
			assert.Equal(t, tt.decided, v.Decided)
			assert.Equal(t, tt.met, v.Met)
			assert.Equal(t, tt.violations, v.Violations)
		})
	}
	// Without the E2E miss the qualified values leave it unknown.
	s := New("x", Limits{TTFT: limits.TTFT, TPOT: limits.TPOT}, Selector{})
	s.QualifiedTTFTUnknown = true
	r := derive.Result{TTFT: ttft, TPOT: tpot, E2E: e2e, TTFTQualified: true}
	var v Verdict
	s.Judge(&r, &v)
	assert.False(t, v.Decided)
	assert.Equal(t, []string{"ttft:unknown", "tpot:unknown"}, v.Violations)
}
