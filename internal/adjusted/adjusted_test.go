// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package adjusted

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/sampling"
)

func TestCount(t *testing.T) {
	tests := []struct {
		ts      string
		want    float64
		outcome Outcome
	}{
		{"", 1, Unsampled},
		{"vendor=abc", 1, Unsampled},
		{"ot=rv:abcdefabcdefab", 1, Unsampled},
		{"ot=th:0", 1, Sampled},
		{"ot=th:8", 2, Sampled},
		{"ot=th:c", 4, Sampled},
		{"vendor=x,ot=th:c;rv:abcdefabcdefab", 4, Sampled},
		{"ot=th:e", 8, Sampled},
		{"ot=th:zz", 1, Malformed},
		{"ot=th:", 1, Malformed},
		{"ot=th:8 9", 1, Malformed},
		{"ot=th:123456789abcdef0", 1, Malformed}, // over 14 hex digits
	}
	for _, tt := range tests {
		got, outcome := Count(tt.ts)
		if got != tt.want || outcome != tt.outcome {
			t.Errorf("Count(%q) = %v, %v; want %v, %v", tt.ts, got, outcome, tt.want, tt.outcome)
		}
	}
}

func TestCountNoAllocWithoutOTelMember(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { Count("vendor=abc,other=def") }); n != 0 {
		t.Fatalf("allocs = %v, want 0", n)
	}
}

func TestRoundIntegralWithoutDraw(t *testing.T) {
	r := NewRounder(1)
	for _, x := range []float64{1, 2, 10, 1 << 20} {
		if got := r.Round(x); got != uint64(x) {
			t.Errorf("Round(%v) = %d", x, got)
		}
	}
}

// TestSampledCountIsUnbiased samples 100,000 requests at 10% the way an
// OTEP 235 sampler does (threshold against the trace's 56 random bits,
// th written into the tracestate) and sums the rounded adjusted counts of
// the kept spans. The sum's standard deviation is sqrt(N(1-p)/p) ≈ 949;
// the assertion allows four of them.
func TestSampledCountIsUnbiased(t *testing.T) {
	const n, p = 100_000, 0.1
	th, err := sampling.ProbabilityToThreshold(p)
	if err != nil {
		t.Fatal(err)
	}
	ts := "ot=th:" + th.TValue()
	rng := rand.New(rand.NewPCG(7, 11))
	r := NewRounder(3)
	var total uint64
	kept := 0
	for range n {
		rnd, err := sampling.UnsignedToRandomness(rng.Uint64() & (1<<56 - 1))
		if err != nil {
			t.Fatal(err)
		}
		if !th.ShouldSample(rnd) {
			continue
		}
		kept++
		c, outcome := Count(ts)
		if outcome != Sampled {
			t.Fatalf("outcome %v for %q", outcome, ts)
		}
		total += r.Round(c)
	}
	bound := 4 * math.Sqrt(n*(1-p)/p)
	if d := math.Abs(float64(total) - n); d > bound {
		t.Fatalf("adjusted total %d from %d kept spans: off by %.0f, bound %.0f", total, kept, d, bound)
	}
	t.Logf("kept %d of %d spans; adjusted total %d (bound ±%.0f)", kept, n, total, bound)
}
