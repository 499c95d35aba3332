// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package preset

import (
	"errors"
	"fmt"
	"maps"
	"slices"
)

// Config is a preset as a user writes it in the processor's
// custom_presets, and as the built-ins are written: one schema, so a custom
// preset can say all a built-in says. With Extends, it starts from that
// built-in and overrides only what it sets.
type Config struct {
	Name    string `mapstructure:"name"`
	Extends string `mapstructure:"extends"`
	// Layer is "client" (SDK, gateway) or "server" (engine).
	Layer      string           `mapstructure:"layer"`
	Match      *MatchConfig     `mapstructure:"match"`
	Attributes AttributesConfig `mapstructure:"attributes"`
	Events     *EventsConfig    `mapstructure:"events"`
	// TTFTNeedsStreamFlag ignores the TTFT attribute unless the stream flag
	// is true.
	TTFTNeedsStreamFlag *bool `mapstructure:"ttft_needs_stream_flag"`
	// StreamBySpanName gives the stream flag of a span without one from its
	// name (span name: true or false).
	StreamBySpanName map[string]bool `mapstructure:"stream_by_span_name"`
	// StreamNameAttribute looks StreamBySpanName up by this attribute's
	// string value instead of the span name (for spans an exporter renames).
	StreamNameAttribute string `mapstructure:"stream_name_attribute"`
	// StreamJSON are attributes holding a JSON object of request parameters
	// whose "stream" boolean is the stream flag of a span without one.
	StreamJSON []string `mapstructure:"stream_json"`
	// FirstPartUnless are attributes only the producer's releases that stamp
	// the first output write: on a span with one, a first_part TTFT is the
	// first output's.
	FirstPartUnless []string `mapstructure:"first_part_unless"`
	// Steps names the per-step child spans read in trace assembly.
	Steps *StepsConfig `mapstructure:"steps"`

	_ struct{}
}

// StepsConfig describes per-step child spans carrying a request's token
// timing, joined to the request span by trace assembly.
type StepsConfig struct {
	SpanName string `mapstructure:"span_name"`
	// Time is the end of the step span that marks its output: "end"
	// (default) or "start".
	Time string `mapstructure:"time"`
	// Counter counts decode steps or tokens so far.
	Counter string `mapstructure:"counter"`
	// FirstTokenFromSteps: the first step carries the first token.
	FirstTokenFromSteps bool `mapstructure:"first_token_from_steps"`
	// Generation holds the Rust Debug text of the step's output (TGI).
	Generation string `mapstructure:"generation"`

	_ struct{}
}

// MatchConfig picks out the producer's spans: one of Any, all of All and
// none of None.
type MatchConfig struct {
	Any  []CondConfig `mapstructure:"any"`
	All  []CondConfig `mapstructure:"all"`
	None []CondConfig `mapstructure:"none"`

	_ struct{}
}

// CondConfig is one test; set exactly one of SpanName, SpanNameContains,
// Attribute (optionally with Values), Event, Scope (the instrumentation
// scope name) and SpanKind.
type CondConfig struct {
	SpanName         string   `mapstructure:"span_name"`
	SpanNameContains string   `mapstructure:"span_name_contains"`
	Attribute        string   `mapstructure:"attribute"`
	Values           []string `mapstructure:"values"`
	Event            string   `mapstructure:"event"`
	Scope            string   `mapstructure:"scope"`
	SpanKind         string   `mapstructure:"span_kind"`

	_ struct{}
}

// AttributesConfig maps span attributes to fields; for each field the first
// key present on the span is used. A set list replaces the extended one.
type AttributesConfig struct {
	TTFT      []TimingConfig `mapstructure:"ttft"`
	E2E       []TimingConfig `mapstructure:"e2e"`
	ITLMean   []TimingConfig `mapstructure:"itl_mean"`
	QueueTime []TimingConfig `mapstructure:"queue_time"`
	// The engine's parts of TTFT and E2E (README, "Attributes written").
	PrefillTime    []TimingConfig `mapstructure:"prefill_time"`
	KVTransferTime []TimingConfig `mapstructure:"kv_transfer_time"`
	DecodeTime     []TimingConfig `mapstructure:"decode_time"`
	OutputTokens   []string       `mapstructure:"output_tokens"`
	InputTokens    []string       `mapstructure:"input_tokens"`
	RequestN       []string       `mapstructure:"request_n"`
	Stream         []string       `mapstructure:"stream"`
	Model          []string       `mapstructure:"model"`

	CacheReadInputTokens  []string `mapstructure:"cache_read_input_tokens"`
	CacheWriteInputTokens []string `mapstructure:"cache_write_input_tokens"`
	ReasoningOutputTokens []string `mapstructure:"reasoning_output_tokens"`

	_ struct{}
}

// TimingConfig names a duration attribute and its unit: "s" (default),
// "ms", "us", "ns", "duration" (strings like "1.5ms") or "timestamp" (an
// absolute time; the field is that time minus the span start).
type TimingConfig struct {
	Key  string `mapstructure:"key"`
	Unit string `mapstructure:"unit"`
	// FirstPart: the producer stamps this time at the first stream part of
	// any kind, not the first output (qualified ttft=first_part).
	FirstPart bool `mapstructure:"first_part"`
	// FirstEvent: the producer times this to its first server-sent event of
	// any kind (qualified ttft=first_event).
	FirstEvent bool `mapstructure:"first_event"`

	_ struct{}
}

// EventsConfig names the span events that mark output.
type EventsConfig struct {
	Chunk      []string `mapstructure:"chunk"`
	FirstToken []string `mapstructure:"first_token"`
	// FirstPart are the first_token events stamped at the first stream part
	// of any kind, not the first output.
	FirstPart  []string `mapstructure:"first_part"`
	TokenCount string   `mapstructure:"token_count"`

	_ struct{}
}

// Build compiles the configuration into a preset, reporting every error:
// the one path of custom and built-in presets alike.
func (pc *Config) Build() (*Preset, error) {
	p := &Preset{}
	if pc.Extends != "" {
		base, ok := ByName(pc.Extends)
		if !ok {
			return nil, fmt.Errorf("extends: unknown preset %q: allowed values are %s", pc.Extends, NamesString())
		}
		p = base
	}
	p.Name = pc.Name
	if pc.Layer != "" {
		p.Layer = pc.Layer
	}
	if pc.Match != nil {
		p.Match = Match{Any: conds(pc.Match.Any), All: conds(pc.Match.All), None: conds(pc.Match.None)}
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
func (pc *Config) applyStream(p *Preset) {
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
func (ec *EventsConfig) build(err error) (Events, error) {
	ev := Events{Chunk: slices.Clone(ec.Chunk), FirstToken: slices.Clone(ec.FirstToken),
		FirstPart: slices.Clone(ec.FirstPart), TokenCount: ec.TokenCount}
	for i, e := range ec.FirstPart {
		if !slices.Contains(ec.FirstToken, e) {
			err = errors.Join(err, fmt.Errorf("events.first_part[%d]: %q is not one of events.first_token", i, e))
		}
	}
	return ev, err
}

// stepTimes are the spellings of StepsConfig.Time.
var stepTimes = map[string]StepTime{"": StepEnd, "end": StepEnd, "start": StepStart}

// build turns the steps configuration into the preset's.
func (sc *StepsConfig) build() (*Steps, error) {
	var err error
	if sc.SpanName == "" {
		err = errors.New("steps.span_name: must not be empty")
	}
	t, ok := stepTimes[sc.Time]
	if !ok {
		err = errors.Join(err, fmt.Errorf("steps.time: %q: allowed values are \"end\", \"start\"", sc.Time))
	}
	return &Steps{SpanName: sc.SpanName, Time: t, Counter: sc.Counter,
		FirstTokenFromSteps: sc.FirstTokenFromSteps, Generation: sc.Generation}, err
}

// applyTo overrides m with every attribute list a sets, reporting every
// error.
func (a *AttributesConfig) applyTo(m *Mapping) error {
	var err error
	for _, t := range []struct {
		name string
		src  []TimingConfig
		dst  *[]TimingAttr
	}{{"ttft", a.TTFT, &m.TTFT}, {"e2e", a.E2E, &m.E2E}, {"itl_mean", a.ITLMean, &m.ITLMean}, {"queue_time", a.QueueTime, &m.QueueTime},
		{"prefill_time", a.PrefillTime, &m.PrefillTime}, {"kv_transfer_time", a.KVTransferTime, &m.KVTransferTime}, {"decode_time", a.DecodeTime, &m.DecodeTime}} {
		if t.src == nil {
			continue
		}
		*t.dst = nil
		for i, tc := range t.src {
			u, uerr := ParseUnit(tc.Unit)
			if uerr != nil {
				err = errors.Join(err, fmt.Errorf("attributes.%s[%d].unit: %w", t.name, i, uerr))
			}
			if tc.Key == "" {
				err = errors.Join(err, fmt.Errorf("attributes.%s[%d].key: must not be empty", t.name, i))
			}
			if tc.FirstPart && tc.FirstEvent {
				err = errors.Join(err, fmt.Errorf("attributes.%s[%d]: first_part and first_event exclude each other", t.name, i))
			}
			*t.dst = append(*t.dst, TimingAttr{Key: tc.Key, Unit: u, FirstPart: tc.FirstPart, FirstEvent: tc.FirstEvent})
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

func conds(cs []CondConfig) []Cond {
	if len(cs) == 0 {
		return nil
	}
	out := make([]Cond, 0, len(cs))
	for _, c := range cs {
		out = append(out, Cond{SpanName: c.SpanName, SpanNameContains: c.SpanNameContains, Attribute: c.Attribute, AttributeValues: slices.Clone(c.Values), Event: c.Event,
			Scope: c.Scope, SpanKind: c.SpanKind})
	}
	return out
}
