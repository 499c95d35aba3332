// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloprocessor

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/llmslo/llmslo/internal/contract"
	"github.com/llmslo/llmslo/internal/preset"
	"github.com/llmslo/llmslo/internal/slo"
)

// This file turns a validated Config into what the processor runs on: the
// presets in matching order and the compiled SLOs.

// build turns the configuration into a preset, reporting the first error.
func (pc *PresetConfig) build() (*preset.Preset, error) {
	p := &preset.Preset{}
	if pc.Extends != "" {
		base, ok := preset.ByName(pc.Extends)
		if !ok {
			return nil, fmt.Errorf("extends: unknown preset %q: allowed values are %s", pc.Extends, preset.NamesString())
		}
		p = base
	}
	p.Name = pc.Name
	if pc.Layer != "" {
		p.Layer = pc.Layer
	}
	if pc.Match != nil {
		p.Match = preset.Match{Any: conds(pc.Match.Any), All: conds(pc.Match.All), None: conds(pc.Match.None)}
	}
	err := pc.Attributes.applyTo(&p.Map)
	if pc.Events != nil {
		p.Ev, err = pc.Events.build(err)
	}
	if pc.TTFTNeedsStreamFlag != nil {
		p.TTFTNeedsStreamFlag = *pc.TTFTNeedsStreamFlag
	}
	pc.applyStream(p)
	if pc.FirstPartUnless != nil {
		p.FirstPartUnless = slices.Clone(pc.FirstPartUnless)
	}
	if pc.Steps != nil {
		var serr error
		p.Steps, serr = pc.Steps.build()
		err = errors.Join(err, serr)
	}
	if verr := p.Validate(); verr != nil {
		err = errors.Join(err, verr)
	}
	return p, err
}

// applyStream overrides p's stream-flag rules with those pc sets.
func (pc *PresetConfig) applyStream(p *preset.Preset) {
	if pc.StreamBySpanName != nil {
		p.StreamBySpanName = maps.Clone(pc.StreamBySpanName)
	}
	if pc.StreamNameAttribute != "" {
		p.StreamNameAttribute = pc.StreamNameAttribute
	}
	if pc.StreamJSON != nil {
		p.StreamJSON = slices.Clone(pc.StreamJSON)
	}
}

// build turns the events configuration into the preset's, joining its
// errors to err: a first_part event must be one of the first_token events,
// as only those are read as the first output.
func (ec *EventsConfig) build(err error) (preset.Events, error) {
	ev := preset.Events{Chunk: slices.Clone(ec.Chunk), FirstToken: slices.Clone(ec.FirstToken),
		FirstPart: slices.Clone(ec.FirstPart), TokenCount: ec.TokenCount}
	for i, e := range ec.FirstPart {
		if !slices.Contains(ec.FirstToken, e) {
			err = errors.Join(err, fmt.Errorf("events.first_part[%d]: %q is not one of events.first_token", i, e))
		}
	}
	return ev, err
}

// stepTimes are the spellings of StepsConfig.Time.
var stepTimes = map[string]preset.StepTime{"": preset.StepEnd, "end": preset.StepEnd, "start": preset.StepStart}

// build turns the steps configuration into the preset's.
func (sc *StepsConfig) build() (*preset.Steps, error) {
	var err error
	if sc.SpanName == "" {
		err = errors.New("steps.span_name: must not be empty")
	}
	t, ok := stepTimes[sc.Time]
	if !ok {
		err = errors.Join(err, fmt.Errorf("steps.time: %q: allowed values are \"end\", \"start\"", sc.Time))
	}
	return &preset.Steps{SpanName: sc.SpanName, Time: t, Counter: sc.Counter,
		FirstTokenFromSteps: sc.FirstTokenFromSteps, Generation: sc.Generation}, err
}

// applyTo overrides m with every attribute list a sets, reporting every
// error.
func (a *AttributesConfig) applyTo(m *preset.Mapping) error {
	var err error
	for _, t := range []struct {
		name string
		src  []TimingConfig
		dst  *[]preset.TimingAttr
	}{{"ttft", a.TTFT, &m.TTFT}, {"e2e", a.E2E, &m.E2E}, {"itl_mean", a.ITLMean, &m.ITLMean}, {"queue_time", a.QueueTime, &m.QueueTime},
		{"prefill_time", a.PrefillTime, &m.PrefillTime}, {"kv_transfer_time", a.KVTransferTime, &m.KVTransferTime}, {"decode_time", a.DecodeTime, &m.DecodeTime}} {
		if t.src == nil {
			continue
		}
		*t.dst = nil
		for i, tc := range t.src {
			u, uerr := preset.ParseUnit(tc.Unit)
			if uerr != nil {
				err = errors.Join(err, fmt.Errorf("attributes.%s[%d].unit: %w", t.name, i, uerr))
			}
			if tc.Key == "" {
				err = errors.Join(err, fmt.Errorf("attributes.%s[%d].key: must not be empty", t.name, i))
			}
			if tc.FirstPart && tc.FirstEvent {
				err = errors.Join(err, fmt.Errorf("attributes.%s[%d]: first_part and first_event exclude each other", t.name, i))
			}
			*t.dst = append(*t.dst, preset.TimingAttr{Key: tc.Key, Unit: u, FirstPart: tc.FirstPart, FirstEvent: tc.FirstEvent})
		}
	}
	for _, l := range []struct {
		src []string
		dst *[]string
	}{{a.OutputTokens, &m.OutputTokens}, {a.InputTokens, &m.InputTokens}, {a.RequestN, &m.RequestN}, {a.Stream, &m.Stream}, {a.Model, &m.Model},
		{a.CacheReadInputTokens, &m.CacheReadInputTokens}, {a.CacheWriteInputTokens, &m.CacheWriteInputTokens}, {a.ReasoningOutputTokens, &m.ReasoningOutputTokens}} {
		if l.src != nil {
			*l.dst = slices.Clone(l.src)
		}
	}
	return err
}

func conds(cs []CondConfig) []preset.Cond {
	if len(cs) == 0 {
		return nil
	}
	out := make([]preset.Cond, 0, len(cs))
	for _, c := range cs {
		out = append(out, preset.Cond{SpanName: c.SpanName, SpanNameContains: c.SpanNameContains, Attribute: c.Attribute, AttributeValues: slices.Clone(c.Values), Event: c.Event,
			Scope: c.Scope, SpanKind: c.SpanKind})
	}
	return out
}

// presets returns the enabled presets in matching order: custom presets
// first, then the selected built-ins not replaced by a custom one.
func (c *Config) presets() ([]*preset.Preset, error) {
	var out []*preset.Preset
	custom := map[string]bool{}
	for i := range c.CustomPresets {
		p, err := c.CustomPresets[i].build()
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
