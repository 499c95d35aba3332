// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloprocessor

import (
	"github.com/llmslo/llmslo/internal/preset"
	"github.com/llmslo/llmslo/internal/promtime"
	"github.com/llmslo/llmslo/internal/slo"
)

// Prefix is the attribute_prefix, for the llmslo command's report, which
// reads the processor's attributes back.
func (c *Config) Prefix() string { return c.AttributePrefix }

// ITLTokenAware is token_aware_itl, for the llmslo command's report, which
// derives ITL again as the processor does.
func (c *Config) ITLTokenAware() bool { return c.TokenAwareITL }

// AssemblesTraces is trace_assembly.enabled (the report's Config).
func (c *Config) AssemblesTraces() bool { return c.TraceAssembly.Enabled }

// SLODefinitions are the configuration's SLOs as internal/slo defines them,
// for the llmslo command, which runs this processor in-process and reads
// its verdicts again (the same thresholds the processor compiles) and
// writes the rules and dashboard of their objectives. The configuration
// must be validated.
func (c *Config) SLODefinitions() []slo.Definition {
	out := make([]slo.Definition, 0, len(c.SLOs))
	for i := range c.SLOs {
		s := &c.SLOs[i]
		d := slo.Definition{Name: s.Name, Limits: s.limits(), ExcludeUnknown: s.ExcludesUnknown(),
			Bounds: s.bounds(), Selection: s.Selector.Describe(), Layer: s.Selector.Layer}
		if s.Objective != nil {
			d.Objective = *s.Objective
		}
		d.Period, _ = promtime.ParsePeriod(s.Period) // Validate refused a bad one
		out = append(out, d)
	}
	return out
}

// bounds lists the configured thresholds in constraint order.
func (s *SLOConfig) bounds() []slo.Bound {
	var out []slo.Bound
	names := slo.Names()
	for i, d := range s.configured() {
		if d != nil {
			out = append(out, slo.Bound{Constraint: names[i], Max: *d})
		}
	}
	return out
}

// PresetEvents are the chunk events of every preset the configuration can
// run, by preset name: the built-ins', then the custom presets' as the
// processor builds them (a custom preset's events replace those of the
// built-in it extends).
func (c *Config) PresetEvents() map[string]preset.Events {
	out := map[string]preset.Events{}
	for _, p := range preset.Builtin() {
		out[p.Name] = p.Ev
	}
	for i := range c.CustomPresets {
		// The processor's own path: a preset that does not build is
		// reported by Validate, and its events here are what it sets.
		if p, _ := c.CustomPresets[i].Build(); p != nil {
			out[p.Name] = p.Ev
		}
	}
	return out
}
