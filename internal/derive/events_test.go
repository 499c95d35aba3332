// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package derive

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestEventOrder: events in order take the short paths of outside and
// dedupe (ends only, no copy); the same events shuffled take the full ones.
// Both give the same exact values and errors, whether the span states N
// (the chunks' counts are not kept) or not (N is their sum: tokens, 0 when
// none is known).
func TestEventOrder(t *testing.T) {
	withN := map[string]any{"gen_ai.operation.name": "chat", "gen_ai.request.stream": true, "gen_ai.usage.output_tokens": 4}
	withoutN := map[string]any{"gen_ai.operation.name": "chat", "gen_ai.request.stream": true}
	tests := []struct {
		name       string
		endMs      float64
		inOrder    []ev
		shuffled   []ev
		gaps       []float64
		errs       string
		ttft, itlM Value
		tokens     int64
		// errsWithoutN: the errors when the span states no N (errs
		// otherwise).
		errsWithoutN string
	}{
		{name: "clean", endMs: 200, inOrder: []ev{chunk(100, 1), chunk(120, 1), chunk(150, 1), chunk(190, 1)},
			shuffled: []ev{chunk(150, 1), chunk(100, 1), chunk(190, 1), chunk(120, 1)},
			gaps:     []float64{0.020, 0.030, 0.040}, ttft: k(0.100), itlM: k(0.040), tokens: 4},
		{name: "repeated time", endMs: 200, inOrder: []ev{chunk(100, 1), chunk(120, 1), chunk(120, 1), chunk(190, 1)},
			shuffled: []ev{chunk(120, 1), chunk(190, 1), chunk(100, 1), chunk(120, 1)},
			gaps:     []float64{0.020, 0.070}, errs: "events:duplicate", errsWithoutN: "events:duplicate", ttft: k(0.100), itlM: k(0.070), tokens: 3},
		{name: "last after the end", endMs: 180, inOrder: []ev{chunk(100, 1), chunk(120, 1), chunk(190, 1)},
			shuffled: []ev{chunk(190, 1), chunk(100, 1), chunk(120, 1)},
			errs:     "events:outside_span", errsWithoutN: "events:outside_span,output_tokens:not_emitted", ttft: missing, itlM: missing},
		{name: "zero-token chunk between", endMs: 200, inOrder: []ev{chunk(100, 1), chunk(110, 0), chunk(130, 2)},
			shuffled: []ev{chunk(130, 2), chunk(110, 0), chunk(100, 1)},
			gaps:     []float64{0.030}, ttft: k(0.100), itlM: k(0.030), tokens: 3},
		{name: "multi-token chunks", endMs: 200, inOrder: []ev{chunk(100, 3), chunk(140, 5), chunk(170, 2)},
			shuffled: []ev{chunk(170, 2), chunk(100, 3), chunk(140, 5)},
			gaps:     []float64{0.040, 0.030}, ttft: k(0.100), itlM: k(0.040), tokens: 10},
	}
	for _, tt := range tests {
		for _, attrs := range []map[string]any{withN, withoutN} {
			wantN, wantErrs := int64(4), tt.errs
			if _, ok := attrs["gen_ai.usage.output_tokens"]; !ok {
				wantN, wantErrs = tt.tokens, tt.errsWithoutN
			}
			for _, evs := range [][]ev{tt.inOrder, tt.shuffled} {
				r := derive(t, Options{}, newSpan("chat m", tt.endMs, attrs, evs...))
				assert.Equal(t, wantN, r.OutputTokens, tt.name)
				assert.Equal(t, wantErrs, r.Errors.String(), tt.name)
				assert.Equal(t, tt.ttft, r.TTFT, tt.name)
				assert.Equal(t, tt.itlM, r.ITLMax, tt.name)
				if tt.gaps == nil {
					assert.Empty(t, r.Gaps, tt.name)
					continue
				}
				assertSeconds(t, tt.gaps, r.Gaps)
			}
		}
	}
}
