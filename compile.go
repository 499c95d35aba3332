// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloprocessor

import (
	"slices"
	"time"

	"github.com/llmslo/llmslo/internal/contract"
	"github.com/llmslo/llmslo/internal/preset"
	"github.com/llmslo/llmslo/internal/slo"
)

// This file turns a validated Config into what the processor runs on: the
// presets in matching order and the compiled SLOs.

// presets returns the enabled presets in matching order: custom presets
// first, then the selected built-ins not replaced by a custom one.
func (c *Config) presets() ([]*preset.Preset, error) {
	var out []*preset.Preset
	custom := map[string]bool{}
	for i := range c.CustomPresets {
		p, err := c.CustomPresets[i].Build()
		if err != nil {
			return nil, err
		}
		out = append(out, p)
		custom[p.Name] = true
	}
	for _, p := range preset.Builtin() {
		if custom[p.Name] || len(c.Presets) > 0 && !slices.Contains(c.Presets, p.Name) {
			continue
		}
		out = append(out, p)
	}
	return out, nil
}

// compiledSLO is an SLO with its attribute keys, built once.
type compiledSLO struct {
	*slo.SLO
	metKey, violationsKey, causesKey string
	// pure: the SLO reads nothing from the span's attributes (no
	// per-request thresholds, no attribute selector), so it can be judged
	// before the values are written.
	pure bool
}

// compileSLOs builds the configured SLOs, in order, with their keys.
func (c *Config) compileSLOs(keys contract.Keys) []compiledSLO {
	out := make([]compiledSLO, 0, len(c.SLOs))
	for i := range c.SLOs {
		sc := &c.SLOs[i]
		c := compiledSLO{
			SLO:           sc.compileFrom(slo.New(sc.Name, sc.limits(), sc.Selector.compile())),
			metKey:        keys.SLOMet(sc.Name),
			violationsKey: keys.SLOViolations(sc.Name),
			causesKey:     keys.SLOCauses(sc.Name),
		}
		q, _ := slo.ParseQualifiedTTFT(sc.QualifiedTTFT)
		c.QualifiedTTFTUnknown = q == slo.QualifiedUnknown
		c.pure = c.From == nil && len(c.Selector.Attributes) == 0
		out = append(out, c)
	}
	return out
}

// limits fills the thresholds in constraint order (slo.Limits.At), so no
// second list of the fields can fall out of step with configured().
func (sc *SLOConfig) limits() slo.Limits {
	var l slo.Limits
	for i, d := range sc.configured() {
		*l.At(i) = threshold(d)
	}
	return l
}

func threshold(d *time.Duration) slo.Threshold {
	if d == nil {
		return slo.Threshold{}
	}
	return slo.Threshold{Seconds: d.Seconds(), Set: true}
}

func (s *SelectorConfig) compile() slo.Selector {
	sel := slo.Selector{Layer: s.Layer, Presets: s.Presets, Models: s.Models, Levels: s.Levels,
		InputTokens: s.InputTokens.compile(), OutputTokens: s.OutputTokens.compile()}
	for _, a := range s.Attributes {
		sel.Attributes = append(sel.Attributes, slo.AttributeMatch{Key: a.Key, Values: a.Values})
	}
	return sel
}
