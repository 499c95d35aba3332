// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package slo

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmslo/llmslo/internal/contract"
	"github.com/llmslo/llmslo/internal/derive"
)

// TestAttribute runs each rule of README "Why a request missed" on its
// worked example: the SLO, the request and the causes it gets.
func TestAttribute(t *testing.T) {
	interactive := Limits{TTFT: lim(0.5), TPOT: lim(0.015), E2E: lim(2)}
	e2eOnly := Limits{E2E: lim(2)}
	engine := func(ttft, tpot, e2e float64, n int64, queue, prefill, kv derive.Value) derive.Result {
		return derive.Result{TTFT: k(ttft), TPOT: k(tpot), E2E: k(e2e), OutputTokens: n, HasOutputTokens: true,
			QueueTime: queue, PrefillTime: prefill, KVTransferTime: kv}
	}
	var none derive.Value
	tests := []struct {
		name   string
		limits Limits
		res    derive.Result
		want   []string
	}{
		{"met: no causes", interactive, engine(0.3, 0.01, 1.5, 121, k(0.1), k(0.15), none), nil},
		// TTFT 0.9 = queue 0.7 + prefill 0.15 (+ 0.05 not reported).
		{"ttft: largest part", interactive, engine(0.9, 0.01, 2.1, 121, k(0.7), k(0.15), none), []string{"ttft:queue", "e2e:queue"}},
		{"ttft: prefill", interactive, engine(0.8, 0.01, 1.9, 111, k(0.02), k(0.75), none), []string{"ttft:prefill"}},
		{"ttft: kv transfer", interactive, engine(0.8, 0.01, 1.9, 111, k(0.1), none, k(0.6)), []string{"ttft:kv_transfer"}},
		{"ttft: a tie goes to the first", interactive, engine(0.8, 0.01, 1.9, 111, k(0.4), k(0.4), none), []string{"ttft:queue"}},
		// The parts add up to 0.3 of a 0.9 TTFT: less than half is explained.
		{"ttft: parts explain less than half", interactive, engine(0.9, 0.01, 1.9, 101, k(0.2), k(0.1), none), []string{"ttft:unattributed"}},
		{"ttft: exactly half is explained", interactive, engine(0.8, 0.01, 1.9, 101, k(0.25), k(0.15), none), []string{"ttft:queue"}},
		{"ttft: no part known", interactive, engine(0.9, 0.01, 1.9, 101, none, none, none), []string{"ttft:unattributed"}},
		{"tpot: decode", interactive, engine(0.3, 0.02, 1.9, 81, k(0.1), k(0.15), none), []string{"tpot:decode"}},
		// TPOT 20 ms over the SLO's 15 ms bound: decode, for E2E too.
		{"e2e: decode when TPOT is the problem", interactive, engine(0.3, 0.02, 2.3, 101, k(0.1), k(0.15), none), []string{"tpot:decode", "e2e:decode"}},
		// 400 tokens at 10 ms: 4 s of decode alone against a 2 s budget.
		{"e2e: output length", interactive, engine(0.3, 0.01, 4.29, 400, k(0.1), k(0.15), none), []string{"e2e:output_length"}},
		// No TPOT bound: the default 50 ms; 40 ms is healthy, 100 × 40 ms = 4 s.
		{"e2e: output length at the default bound", e2eOnly, engine(0.2, 0.04, 4.16, 100, none, none, none), []string{"e2e:output_length"}},
		{"e2e: decode above the default bound", e2eOnly, engine(0.2, 0.06, 2.18, 34, none, none, none), []string{"e2e:decode"}},
		// TPOT 10 ms, 100 tokens: 1 s of decode fits; TTFT 1.3 s pushed it over.
		{"e2e: the TTFT part", e2eOnly, engine(1.3, 0.01, 2.29, 100, k(1.1), k(0.15), none), []string{"e2e:queue"}},
		{"e2e: no TPOT, no TTFT", e2eOnly, derive.Result{TTFT: na, TPOT: na, E2E: k(3)}, []string{"e2e:unattributed"}},
		{"queue_time: queue", Limits{QueueTime: lim(0.05)}, engine(0.3, 0.01, 1, 10, k(0.08), none, none), []string{"queue_time:queue"}},
		{"itl: decode", Limits{ITL: lim(0.035)}, derive.Result{ITLMax: k(0.05)}, []string{"itl:decode"}},
		{"error and unknown get none", interactive, derive.Result{Failed: true, TPOT: k(0.01), E2E: k(1)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New("s", tt.limits, Selector{})
			var v Verdict
			s.Judge(&tt.res, &v)
			p := PartsOf(&tt.res)
			Attribute(&tt.res, &p, &tt.limits, &v)
			if tt.want == nil {
				assert.Empty(t, v.Causes)
			} else {
				assert.Equal(t, tt.want, v.Causes)
			}
		})
	}
}

// TestAttributeNetwork: on a client span joined to its engine span, the
// path outside the engine is a part like the engine's own.
func TestAttributeNetwork(t *testing.T) {
	l := Limits{TTFT: lim(0.5)}
	res := derive.Result{TTFT: k(1.2)}
	res.JoinEngine(k(0.3))
	p := PartsOf(&res)
	p.Queue, p.Prefill = k(0.05), k(0.2) // the engine's
	var v Verdict
	New("s", l, Selector{}).Judge(&res, &v)
	Attribute(&res, &p, &l, &v)
	require.Equal(t, []string{"ttft:network"}, v.Causes)
}

// TestAttributePerSequence: with n sequences, N is per sequence, as for TPOT.
func TestAttributePerSequence(t *testing.T) {
	l := Limits{E2E: lim(2)}
	// 400 tokens over 4 sequences: 100 each at 10 ms = 1 s, within budget.
	res := derive.Result{TTFT: k(1.5), TPOT: k(0.01), E2E: k(2.49), OutputTokens: 400, HasOutputTokens: true, Sequences: 4, QueueTime: k(1.4)}
	var v Verdict
	New("s", l, Selector{}).Judge(&res, &v)
	p := PartsOf(&res)
	Attribute(&res, &p, &l, &v)
	require.Equal(t, []string{"e2e:queue"}, v.Causes)
}

// TestAttributeAllocatesNothing: once the causes slice has grown, judging
// and attributing a miss allocate nothing.
func TestAttributeAllocatesNothing(t *testing.T) {
	l := Limits{TTFT: lim(0.5), TPOT: lim(0.015), ITL: lim(0.03), E2E: lim(2), QueueTime: lim(0.05)}
	s := New("s", l, Selector{})
	res := derive.Result{TTFT: k(0.9), TPOT: k(0.02), ITLMax: k(0.1), E2E: k(3), QueueTime: k(0.7), OutputTokens: 100, HasOutputTokens: true}
	var v Verdict
	p := PartsOf(&res)
	allocs := testing.AllocsPerRun(100, func() {
		s.Judge(&res, &v)
		Attribute(&res, &p, &l, &v)
	})
	require.Zero(t, allocs)
	require.Equal(t, []string{"ttft:queue", "tpot:decode", "itl:decode", "e2e:decode", "queue_time:queue"}, v.Causes)
}

// TestCauseRuleTable: every constraint has a rule, and the entries it
// writes read back through the contract.
func TestCauseRuleTable(t *testing.T) {
	for i, c := range constraints {
		require.NotNil(t, c.cause, c.name)
		for cause := range contract.NumCauses {
			got, gotCause, ok := contract.ParseCauseEntry(contract.CauseEntry(i, cause))
			require.True(t, ok)
			require.Equal(t, i, got)
			require.Equal(t, cause, gotCause)
		}
	}
	for _, bad := range []string{"", "ttft", "ttft:", ":queue", "ttft:slow", "error:queue", "ttft:queue:x"} {
		_, _, ok := contract.ParseCauseEntry(bad)
		require.False(t, ok, bad)
	}
}
