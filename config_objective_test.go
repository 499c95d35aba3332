// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloprocessor

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"

	"github.com/llmslo/llmslo/internal/contract"
)

// TestObjectiveAndPeriod: objective and period decode beside the
// thresholds (an integer objective too) and are validated, each error
// naming its field.
func TestObjectiveAndPeriod(t *testing.T) {
	load := func(slo map[string]any) (*Config, error) {
		t.Helper()
		slo["name"] = "interactive"
		if _, ok := slo["ttft"]; !ok {
			slo["ttft"] = "500ms"
		}
		cfg := createDefaultConfig().(*Config)
		require.NoError(t, confmap.NewFromStringMap(map[string]any{"slos": []any{slo}}).Unmarshal(cfg))
		return cfg, cfg.Validate()
	}
	cfg, err := load(map[string]any{"objective": 99.5, "period": "28d"})
	require.NoError(t, err)
	assert.Equal(t, 99.5, *cfg.SLOs[0].Objective)
	assert.Equal(t, "28d", cfg.SLOs[0].Period)

	cfg, err = load(map[string]any{"objective": 99})
	require.NoError(t, err)
	assert.Equal(t, 99.0, *cfg.SLOs[0].Objective)
	assert.Empty(t, cfg.SLOs[0].Period, "the default (30d) is applied by whoever reads the period")

	cfg, err = load(map[string]any{})
	require.NoError(t, err)
	assert.Nil(t, cfg.SLOs[0].Objective, "no objective: no rules")

	for _, c := range []struct {
		slo map[string]any
		err string
	}{
		{map[string]any{"objective": 100}, "slos[0].objective: 100 must be a percentage of at least 1 and below 100, such as 99.5"},
		{map[string]any{"objective": 0}, "slos[0].objective: 0 must be a percentage of at least 1 and below 100"},
		{map[string]any{"objective": -1}, "slos[0].objective: -1 must be"},
		{map[string]any{"objective": 0.99}, "slos[0].objective: 0.99 is given in percent: did you mean 99?"},
		{map[string]any{"objective": 0.995}, "slos[0].objective: 0.995 is given in percent: did you mean 99.5?"},
		{map[string]any{"period": "28d"}, `slos[0].period: "28d" without objective changes nothing: add objective (in percent, such as 99) or remove period`},
		{map[string]any{"ttft": "200h"}, "slos[0].ttft: 200h0m0s is beyond a week (168h): the processor takes longer values as corrupt, so no request could fail it"},
		{map[string]any{"objective": 99, "period": "30"}, `slos[0].period: "30" is not a duration such as 30d, 4w or 1h30m`},
		{map[string]any{"objective": 99, "period": "1d"}, "slos[0].period: 1d is shorter than 3d"},
	} {
		_, err := load(c.slo)
		assert.ErrorContains(t, err, c.err, "%v", c.slo)
	}
}

// TestUnknownVerdicts: unknown_verdicts decodes to its policy (unset is
// bad), a wrong value is refused naming the field and the allowed values,
// and unset and "bad" are one definition for the duplicate check.
func TestUnknownVerdicts(t *testing.T) {
	for _, c := range []struct {
		value   any
		exclude bool
		err     string
	}{
		{nil, false, ""},
		{"bad", false, ""},
		{"exclude", true, ""},
		{"drop", false, `slos[0].unknown_verdicts: "drop": allowed values are "bad" (the default: an undecidable verdict counts as not met) and "exclude" (left out of the SLI: violated / (met + violated))`},
		{"Exclude", false, `slos[0].unknown_verdicts: "Exclude": allowed values are "bad"`},
	} {
		slo := map[string]any{"name": "interactive", "ttft": "500ms"}
		if c.value != nil {
			slo["unknown_verdicts"] = c.value
		}
		cfg := createDefaultConfig().(*Config)
		require.NoError(t, confmap.NewFromStringMap(map[string]any{"slos": []any{slo}}).Unmarshal(cfg))
		err := cfg.Validate()
		if c.err != "" {
			assert.ErrorContains(t, err, c.err, "%v", c.value)
			continue
		}
		require.NoError(t, err, "%v", c.value)
		assert.Equal(t, c.exclude, cfg.SLOs[0].ExcludesUnknown(), "%v", c.value)
	}
	unset := &Config{SLOs: []SLOConfig{{Name: "a"}}}
	bad := &Config{SLOs: []SLOConfig{{Name: "a", UnknownVerdicts: "bad"}}}
	exclude := &Config{SLOs: []SLOConfig{{Name: "a", UnknownVerdicts: "exclude"}}}
	assert.Equal(t, unset.sloDefinitions(), bad.sloDefinitions())
	assert.NotEqual(t, unset.sloDefinitions(), exclude.sloDefinitions())
	assert.Equal(t, []string{"a"}, exclude.excludingUnknown())
	assert.Empty(t, bad.excludingUnknown())
}

// TestQualifiedTTFTSetting: qualified_ttft decodes to the SLO's choice
// (unset keeps), and a wrong value is refused naming the field and the
// allowed values.
func TestQualifiedTTFTSetting(t *testing.T) {
	for _, c := range []struct {
		value   any
		unknown bool
		err     string
	}{
		{nil, false, ""},
		{"keep", false, ""},
		{"unknown", true, ""},
		{"drop", false, `slos[0].qualified_ttft: "drop": allowed values are "keep"`},
	} {
		slo := map[string]any{"name": "interactive", "ttft": "500ms"}
		if c.value != nil {
			slo["qualified_ttft"] = c.value
		}
		cfg := createDefaultConfig().(*Config)
		require.NoError(t, confmap.NewFromStringMap(map[string]any{"slos": []any{slo}}).Unmarshal(cfg))
		err := cfg.Validate()
		if c.err != "" {
			assert.ErrorContains(t, err, c.err, "%v", c.value)
			continue
		}
		require.NoError(t, err, "%v", c.value)
		assert.Equal(t, c.unknown, cfg.compileSLOs(contract.NewKeys(contract.DefaultPrefix))[0].QualifiedTTFTUnknown, "%v", c.value)
	}
	unset := &Config{SLOs: []SLOConfig{{Name: "a"}}}
	keep := &Config{SLOs: []SLOConfig{{Name: "a", QualifiedTTFT: "keep"}}}
	unknown := &Config{SLOs: []SLOConfig{{Name: "a", QualifiedTTFT: "unknown"}}}
	assert.Equal(t, unset.sloDefinitions(), keep.sloDefinitions())
	assert.NotEqual(t, unset.sloDefinitions(), unknown.sloDefinitions())
}
