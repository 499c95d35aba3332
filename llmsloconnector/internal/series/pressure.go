// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package series

import (
	"math"

	"github.com/llmslo/llmslo/internal/aggregate"
	"github.com/llmslo/llmslo/internal/catalog"
	"github.com/llmslo/llmslo/internal/contract"
)

// WindowConstraint is the contract constraint each window measures, by
// Window; empty: no SLO constraint bounds that distribution. The itl
// window holds every gap, while the processor's itl constraint bounds each
// request's largest gap, so its quantile is not the constrained value.
var WindowConstraint = [NumWindows]string{
	WindowTTFT: contract.ConstraintTTFT,
	WindowTPOT: contract.ConstraintTPOT,
	WindowE2E:  contract.ConstraintE2E,
}

// OneSpanCannotSet reports whether, in a window of n values whose heaviest
// span added w of them, that span stays out of the q-quantile: the
// quantile interpolates the order statistics at ranks floor((n-1)q) and
// the next (aggregate.Sketch.Quantile), and a span of weight w that is the
// window's largest holds the top w ranks, so it is left out when
// floor((n-1)q) + 1 < n - w. Then one span, whatever its latency, moves the
// quantile by at most w ranks of the other requests' latencies, never
// above the largest of them.
func OneSpanCannotSet(n, w uint64, q float64) bool {
	if n <= w+1 {
		return false
	}
	return uint64(math.Floor(float64(n-1)*q))+w+2 <= n
}

// pressureOf writes, for window w of s (merged into sk, with at least one
// sample; heaviest is the most one span added to it), the pressure of every
// SLO that judged a span of s and bounds the window's constraint, when the
// window holds min_requests requests and no one span can be its quantile
// (OneSpanCannotSet). Flush only: the per-span path is unchanged.
func (p *Points) pressureOf(s *Series, w Window, sk *aggregate.Sketch, heaviest uint64) {
	if p.pressure == nil || WindowConstraint[w] == "" {
		return
	}
	n := sk.Count()
	if n < uint64(p.out.PressureMinRequests) || !OneSpanCannotSet(n, heaviest, p.out.PressureQuantile) {
		return
	}
	var q float64
	computed := false
	for i, sc := range s.slos {
		name, ok := p.sloName(i)
		if sc == nil || !ok {
			continue
		}
		spec := p.pressure[name]
		if spec == nil || spec[w] == 0 {
			continue
		}
		if !computed {
			q, computed = sk.Quantile(p.out.PressureQuantile), true
		}
		dp := p.stamp(s, p.b.gauge(s, &p.out.Names.Pressure).AppendEmpty())
		dp.Attributes().PutStr(catalog.AttrSLOName, name)
		dp.Attributes().PutStr(catalog.AttrSLOConstraint, WindowConstraint[w])
		dp.SetDoubleValue(q / spec[w])
	}
}
