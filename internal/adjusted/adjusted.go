// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

// Package adjusted reads, from a span's W3C tracestate, how many requests a
// sampled span stands for: its adjusted count, 1/p, where p is the sampling
// probability that an OTEP 235 sampler recorded as `ot=th:<hex>`.
//
// Counting every sampled span as one request makes request rates, good
// requests per second and token goodput 1/p times too small; adding the
// adjusted count makes each of them unbiased. The parsing is contrib's
// pkg/sampling, the same code the probabilistic sampler writes the value with.
package adjusted

import (
	"math"
	"math/rand/v2"
	"strings"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/sampling"
)

// MaxCount is the largest adjusted count any configuration may accept: a
// sampling probability below 2^-20 (one in a million) is no real
// deployment's, and ot=th:ffffffffffffff (2^56 requests per span) would wrap
// every counter in 256 spans.
const MaxCount = 1 << 20

// Outcome says how a tracestate was read.
type Outcome uint8

const (
	// Unsampled: no OpenTelemetry threshold; the span counts as one.
	Unsampled Outcome = iota
	// Sampled: a valid threshold; the span counts as 1/p.
	Sampled
	// Malformed: a tracestate or threshold that cannot be read, or one that
	// says the span should never have been sampled; it counts as one.
	Malformed
)

// Count returns the adjusted count of a span with tracestate ts and how ts
// was read. A tracestate without an `ot=` member costs one substring search
// and no allocation.
func Count(ts string) (float64, Outcome) {
	if !strings.Contains(ts, "ot=") {
		return 1, Unsampled
	}
	w3c, err := sampling.NewW3CTraceState(ts)
	if err != nil {
		return 1, Malformed
	}
	otts := w3c.OTelValue()
	if otts.TValue() == "" {
		return 1, Unsampled
	}
	th, ok := otts.TValueThreshold()
	if !ok {
		return 1, Malformed
	}
	n := th.AdjustedCount()
	if n < 1 || math.IsInf(n, 0) || math.IsNaN(n) {
		return 1, Malformed
	}
	return n, Sampled
}

// Rounder rounds adjusted counts to whole numbers stochastically, as
// spanmetricsconnector does: x becomes ⌈x⌉ with probability x − ⌊x⌋, else
// ⌊x⌋, so a sum of rounded counts has the sum of the counts as its
// expectation. A Rounder is not safe for concurrent use: keep one per shard.
type Rounder struct{ rng *rand.Rand }

// NewRounder returns a Rounder drawing from a PCG seeded with seed.
func NewRounder(seed uint64) *Rounder {
	return &Rounder{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// Round returns x rounded stochastically; an integral x is returned as it
// is without a draw.
func (r *Rounder) Round(x float64) uint64 {
	f := math.Floor(x)
	if frac := x - f; frac > 0 && r.rng.Float64() < frac {
		f++
	}
	return uint64(f)
}
