// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloprocessor

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"

	"github.com/llmslo/llmslo/internal/contract"
	"github.com/llmslo/llmslo/internal/slo"
)

// TestConstraintFieldOrder: the configuration key of each contract
// constraint (and its _from) lands at that constraint's index of
// configured() and from(), and in that constraint's field of the compiled
// limits. The lists' lengths are checked by the compiler; this checks
// their order, which a swap of two fields would break silently.
func TestConstraintFieldOrder(t *testing.T) {
	for i, name := range contract.Constraints {
		t.Run(name, func(t *testing.T) {
			var sc SLOConfig
			raw := map[string]any{"name": "x", name: "7ms", name + "_from": map[string]any{"key": "k"}}
			require.NoError(t, confmap.NewFromStringMap(raw).Unmarshal(&sc))
			for j, d := range sc.configured() {
				assert.Equal(t, i == j, d != nil, "configured()[%d]", j)
			}
			for j, f := range sc.from() {
				assert.Equal(t, i == j, f != nil, "from()[%d]", j)
			}
			want := make([]slo.Threshold, contract.NumConstraints)
			want[i] = slo.Threshold{Seconds: (7 * time.Millisecond).Seconds(), Set: true}
			l := sc.limits()
			assert.Equal(t, want, l.Ordered())
		})
	}
}

// TestValidateNamesConstraint: a bad threshold's error names the
// constraint's configuration key, for every constraint.
func TestValidateNamesConstraint(t *testing.T) {
	for _, name := range contract.Constraints {
		var sc SLOConfig
		require.NoError(t, confmap.NewFromStringMap(map[string]any{"name": "x", name: "-1s"}).Unmarshal(&sc))
		errs := sc.validate("slos[0]")
		require.Len(t, errs, 1, name)
		assert.EqualError(t, errs[0], "slos[0]."+name+": -1s must be a positive duration such as 500ms")
	}
}

// TestSetThreshold: every contract name sets its own field (the one its
// configuration key sets), anything else is refused and changes nothing.
func TestSetThreshold(t *testing.T) {
	for i, name := range append(contract.Constraints[:], "ttfb", "") {
		var sc SLOConfig
		ok := sc.SetThreshold(name, 7*time.Millisecond)
		assert.Equal(t, i < contract.NumConstraints, ok, name)
		for j, d := range sc.configured() {
			assert.Equal(t, i == j, d != nil, "%s: configured()[%d]", name, j)
		}
	}
}
