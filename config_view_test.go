// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloprocessor

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmslo/llmslo/internal/promtime"
	"github.com/llmslo/llmslo/internal/slo"
)

// TestSLODefinitions: what the llmslo command reads of each SLO, in
// configuration order: the thresholds as written and in seconds, the
// objective (0 without one), the parsed period, the selector in words and
// the unknown_verdicts policy.
func TestSLODefinitions(t *testing.T) {
	ms := func(n int) *time.Duration { d := time.Duration(n) * time.Millisecond; return &d }
	objective := 99.9
	cfg := createDefaultConfig().(*Config)
	cfg.AttributePrefix, cfg.TokenAwareITL = "x.", true
	cfg.SLOs = []SLOConfig{
		{Name: "interactive", TTFT: ms(500), E2E: ms(2000)},
		{Name: "engine_queue", QueueTime: ms(100), Objective: &objective, Period: "28d", UnknownVerdicts: "exclude",
			Selector: SelectorConfig{Layer: "server", Models: []string{"m1", "m2"}}},
	}
	require.NoError(t, cfg.Validate())
	assert.Equal(t, []slo.Definition{
		{
			Name:   "interactive",
			Limits: slo.Limits{TTFT: slo.Threshold{Seconds: 0.5, Set: true}, E2E: slo.Threshold{Seconds: 2, Set: true}},
			Bounds: []slo.Bound{{Constraint: slo.TTFT, Max: 500 * time.Millisecond}, {Constraint: slo.E2E, Max: 2 * time.Second}},
			Period: promtime.DefaultPeriod,
		},
		{
			Name: "engine_queue", Limits: slo.Limits{QueueTime: slo.Threshold{Seconds: 0.1, Set: true}}, ExcludeUnknown: true,
			Objective: 99.9, Period: 28 * promtime.Day, Bounds: []slo.Bound{{Constraint: slo.QueueTime, Max: 100 * time.Millisecond}},
			Selection: "layer server; models m1, m2", Layer: "server",
		},
	}, cfg.SLODefinitions())
	assert.Equal(t, "x.", cfg.Prefix())
	assert.True(t, cfg.ITLTokenAware())
}
