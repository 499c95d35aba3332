// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloprocessor

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"

	"github.com/llmslo/llmslo/internal/assembly"
	"github.com/llmslo/llmslo/internal/confcheck"
	"github.com/llmslo/llmslo/internal/contract"
	"github.com/llmslo/llmslo/internal/derive"
	"github.com/llmslo/llmslo/internal/preset"
	"github.com/llmslo/llmslo/internal/promtime"
	"github.com/llmslo/llmslo/internal/slo"
)

// The values of parts (Config.Parts).
const (
	PartsAuto   = "auto"
	PartsAlways = "always"
	PartsNever  = "never"
)

var partsModes = []string{PartsAuto, PartsAlways, PartsNever}

// writesParts reports whether the parts are written on the spans: in auto,
// when some SLO bounds TTFT or E2E, whose causes the parts name, so a
// pipeline whose SLOs never read a part pays nothing for them.
func (c *Config) writesParts() bool {
	switch c.Parts {
	case PartsAlways:
		return true
	case PartsNever:
		return false
	}
	return c.readsParts()
}

// readsParts reports whether some SLO bounds TTFT or E2E, whose misses'
// causes are judged from the parts (written or not).
func (c *Config) readsParts() bool {
	for i := range c.SLOs {
		s := &c.SLOs[i]
		if s.TTFT != nil || s.E2E != nil || s.TTFTFrom != nil || s.E2EFrom != nil {
			return true
		}
	}
	return false
}

// Config configures the llm_slo processor.
type Config struct {
	// AttributePrefix is the namespace of every attribute the processor
	// writes. Default "llm.".
	AttributePrefix string `mapstructure:"attribute_prefix"`

	// Presets lists the built-in producer presets to recognize, in the
	// built-in matching order. Empty means all of them. Listing fewer narrows
	// which spans are treated as LLM requests.
	Presets []string `mapstructure:"presets"`

	// CustomPresets adds producers (or, under a built-in's name, replaces
	// that built-in). They are matched before the built-ins, in order.
	CustomPresets []PresetConfig `mapstructure:"custom_presets"`

	// TokenAwareITL spreads each chunk's gap over the tokens the chunk
	// carries (per-token ITL); off, each chunk is one gap (per-chunk ITL).
	TokenAwareITL bool `mapstructure:"token_aware_itl"`

	// Parts says when the parts of a request's latency (llm.prefill_time,
	// llm.kv_transfer_time, llm.decode_time, llm.network_time) are written
	// on the span: "auto" (the default) when some SLO bounds TTFT or E2E,
	// the constraints whose misses they explain; "always"; "never". Each
	// is one more attribute on every span that has it, and the engines
	// already carry theirs under their own keys.
	Parts string `mapstructure:"parts"`

	// Model says where the model name comes from when the span carries none
	// (vLLM V1 spans do not).
	Model ModelConfig `mapstructure:"model"`

	// SLOs are judged on every selected request span.
	SLOs []SLOConfig `mapstructure:"slos"`

	// TrustUpstream keeps the attributes of this processor's namespace that
	// a span already carries (an earlier collector tier's) as they are: such
	// a span is passed on untouched, not derived again. Off (the default),
	// every such key that this processor did not write in this pass is
	// removed, and an LLM span is derived again from the producer's inputs,
	// so no client can forge a value or a verdict. Turn it on only when
	// every sender of this pipeline is a collector running this processor.
	TrustUpstream bool `mapstructure:"trust_upstream"`

	// TraceAssembly joins per-step child spans (SGLang decode_loop, TGI
	// send_generation) to their request span. Off by default: it makes the
	// processor stateful and needs all spans of a trace at one collector.
	TraceAssembly TraceAssemblyConfig `mapstructure:"trace_assembly"`

	_ struct{}
}

// TraceAssemblyConfig bounds the trace-assembly mode.
type TraceAssemblyConfig struct {
	Enabled bool `mapstructure:"enabled"`
	// Wait is how long a request span whose steps are not all there is held
	// back. The default covers the OTel SDKs' 5 s batch export delay, for
	// servers (SGLang) that export steps and requests from different
	// processes.
	Wait time.Duration `mapstructure:"wait"`
	// MaxTraces bounds the traces with pending steps or held requests; the
	// oldest is evicted beyond it.
	MaxTraces int `mapstructure:"max_traces"`
	// MaxStepsPerTrace bounds the step timestamps kept for one request.
	MaxStepsPerTrace int `mapstructure:"max_steps_per_trace"`
	// MaxSteps bounds the step timestamps kept over all traces (16 bytes
	// each).
	MaxSteps int `mapstructure:"max_steps"`
	// MaxHeldPerTrace bounds the request spans held for one trace; a
	// request beyond it passes at once, derived from its own attributes.
	MaxHeldPerTrace int `mapstructure:"max_held_per_trace"`
	// MaxHeld bounds the request spans held over all traces.
	MaxHeld int `mapstructure:"max_held"`

	_ struct{}
}

// ModelConfig is the fallback for the model name.
type ModelConfig struct {
	// ResourceAttribute, if set, is a resource attribute holding the model.
	ResourceAttribute string `mapstructure:"resource_attribute"`
	// Default is used when nothing else names the model.
	Default string `mapstructure:"default"`

	_ struct{}
}

// SLOConfig is one named objective. Every threshold is optional; at least
// one must be set. A request meets the SLO when every set constraint holds
// (value <= threshold).
type SLOConfig struct {
	Name string `mapstructure:"name"`
	// TTFT bounds the time to first token.
	TTFT *time.Duration `mapstructure:"ttft"`
	// TPOT bounds the mean time per output token after the first.
	TPOT *time.Duration `mapstructure:"tpot"`
	// ITL bounds the largest inter-token gap of the request.
	ITL *time.Duration `mapstructure:"itl"`
	// E2E bounds the time from request start to the last token.
	E2E *time.Duration `mapstructure:"e2e"`
	// QueueTime bounds the engine's queue time.
	QueueTime *time.Duration `mapstructure:"queue_time"`
	// The *From thresholds are per request, read from a span attribute
	// and preferred over the configured value (config_from.go).
	TTFTFrom      *ThresholdFrom `mapstructure:"ttft_from"`
	TPOTFrom      *ThresholdFrom `mapstructure:"tpot_from"`
	ITLFrom       *ThresholdFrom `mapstructure:"itl_from"`
	E2EFrom       *ThresholdFrom `mapstructure:"e2e_from"`
	QueueTimeFrom *ThresholdFrom `mapstructure:"queue_time_from"`
	// Selector restricts the SLO to some requests; empty selects all.
	Selector SelectorConfig `mapstructure:"selector"`
	// Objective is the share of selected requests that must meet the SLO,
	// in percent (99, 99.5). It changes nothing per span: the llmslo command
	// turns it into recording rules, burn-rate alerts and a dashboard.
	Objective *float64 `mapstructure:"objective"`
	// Period is the objective's compliance window, a Prometheus duration
	// (30d, 28d, 4w); default 30d.
	Period string `mapstructure:"period"`
	// UnknownVerdicts says how undecidable verdicts count in the SLI: "bad"
	// (the default: as not met, over every selected request) or "exclude"
	// (left out: violated / (met + violated), over the decidable requests).
	// It changes nothing per span; the connector's goodput gauge, the rules,
	// the dashboard and the report read it.
	UnknownVerdicts string `mapstructure:"unknown_verdicts"`
	// QualifiedTTFT says how a TTFT its producer is known to measure
	// between the wrong events (a ttft= qualifier of llm.metrics.source) is
	// judged: "keep" (the default: as given) or "unknown" (it and the TPOT
	// from it are unknown on such spans).
	QualifiedTTFT string `mapstructure:"qualified_ttft"`

	_ struct{}
}

// SelectorConfig restricts an SLO. Every set part must hold.
type SelectorConfig struct {
	// Layer is "client" or "server".
	Layer string `mapstructure:"layer"`
	// Presets lists producer presets.
	Presets []string `mapstructure:"presets"`
	// Models lists resolved model names.
	Models []string `mapstructure:"models"`
	// Levels lists instrumentation levels: framework, provider, unstated
	// (the level= qualifier of llm.metrics.source, or none).
	Levels []string `mapstructure:"levels"`
	// Attributes are span (then resource) attributes with allowed values.
	Attributes []AttributeMatchConfig `mapstructure:"attributes"`
	// InputTokens and OutputTokens bound the request's derived token counts
	// (config_tokens.go); a span whose count is unknown is not selected by
	// a bound on that count.
	InputTokens  *TokenBoundsConfig `mapstructure:"input_tokens"`
	OutputTokens *TokenBoundsConfig `mapstructure:"output_tokens"`

	_ struct{}
}

// AttributeMatchConfig matches a string attribute against allowed values.
type AttributeMatchConfig struct {
	Key    string   `mapstructure:"key"`
	Values []string `mapstructure:"values"`

	_ struct{}
}

// The custom presets' schema is the preset package's, in which the
// built-ins are written too: one schema, compiled by one path.
type (
	// PresetConfig defines a producer. With Extends, it starts from that
	// built-in and overrides only what it sets.
	PresetConfig = preset.Config
	// StepsConfig describes per-step child spans read in trace assembly.
	StepsConfig = preset.StepsConfig
	// MatchConfig picks out the producer's spans.
	MatchConfig = preset.MatchConfig
	// CondConfig is one recognition test.
	CondConfig = preset.CondConfig
	// AttributesConfig maps span attributes to fields.
	AttributesConfig = preset.AttributesConfig
	// TimingConfig names a duration attribute and its unit.
	TimingConfig = preset.TimingConfig
	// EventsConfig names the span events that mark output.
	EventsConfig = preset.EventsConfig
)

var _ component.Config = (*Config)(nil)

// sloName is the allowed shape of an SLO name: it becomes part of an
// attribute key.
var sloName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// Validate reports every configuration error, each naming its field.
var _ confmap.Unmarshaler = (*Config)(nil)

// Unmarshal decodes the configuration after refusing what would decode
// silently into something else: a duration written without a unit
// (`ttft: 500` would be 500ns, `ttft: 0.5` would be 0s). The error names the
// field, repeats what was written and suggests the fix ("did you mean
// 500ms?"). Every time.Duration field of Config is checked, present and
// future, through its mapstructure tags.
func (c *Config) Unmarshal(conf *confmap.Conf) error {
	return confcheck.Unmarshal(conf, c)
}

func (c *Config) Validate() error {
	var errs []error
	if c.AttributePrefix == "" {
		errs = append(errs, errors.New("attribute_prefix: must not be empty (default \"llm.\")"))
	} else if !strings.HasSuffix(c.AttributePrefix, ".") {
		errs = append(errs, fmt.Errorf("attribute_prefix: %q must end with \".\"", c.AttributePrefix))
	}
	for _, name := range c.Presets {
		if _, ok := preset.ByName(name); !ok {
			errs = append(errs, fmt.Errorf("presets: unknown preset %q: allowed values are %s", name, preset.NamesString()))
		}
	}
	if !slices.Contains(partsModes, c.Parts) {
		errs = append(errs, fmt.Errorf("parts: %q: allowed values are %s", c.Parts, strings.Join(partsModes, ", ")))
	}
	errs = append(errs, c.validateCustomPresets()...)
	errs = append(errs, c.TraceAssembly.validate()...)
	names := map[string]bool{}
	for i := range c.SLOs {
		field := fmt.Sprintf("slos[%d]", i)
		if names[c.SLOs[i].Name] {
			errs = append(errs, fmt.Errorf("%s.name: duplicate SLO name %q", field, c.SLOs[i].Name))
		}
		names[c.SLOs[i].Name] = true
		errs = append(errs, c.SLOs[i].validate(field)...)
		errs = append(errs, c.SLOs[i].Selector.validate(field+".selector", c.presetNames(), c.Presets)...)
	}
	return errors.Join(errs...)
}

// unjoin returns the errors errors.Join joined into err, flattened.
func unjoin(err error) []error {
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		if err == nil {
			return nil
		}
		return []error{err}
	}
	var out []error
	for _, e := range j.Unwrap() {
		out = append(out, unjoin(e)...)
	}
	return out
}

func (c *Config) validateCustomPresets() []error {
	var errs []error
	seen := map[string]bool{}
	for i := range c.CustomPresets {
		p := &c.CustomPresets[i]
		if seen[p.Name] {
			errs = append(errs, fmt.Errorf("custom_presets[%d]: duplicate name %q", i, p.Name))
		}
		seen[p.Name] = true
		_, err := p.Build()
		// Each of build's joined errors names its field under this one.
		for _, e := range unjoin(err) {
			errs = append(errs, fmt.Errorf("custom_presets[%d]: %w", i, e))
		}
	}
	return errs
}

// bounds are the settings as the assembly takes them.
func (ta *TraceAssemblyConfig) bounds() assembly.Config {
	return assembly.Config{Wait: ta.Wait, MaxTraces: ta.MaxTraces, MaxStepsPerTrace: ta.MaxStepsPerTrace,
		MaxSteps: ta.MaxSteps, MaxHeldPerTrace: ta.MaxHeldPerTrace, MaxHeld: ta.MaxHeld}
}

func (ta *TraceAssemblyConfig) validate() []error {
	if !ta.Enabled {
		return nil
	}
	var errs []error
	if ta.Wait <= 0 {
		errs = append(errs, fmt.Errorf("trace_assembly.wait: %v must be a positive duration such as 6s", ta.Wait))
	}
	for _, b := range []struct {
		name string
		v    int
	}{{"max_traces", ta.MaxTraces}, {"max_steps_per_trace", ta.MaxStepsPerTrace}, {"max_steps", ta.MaxSteps},
		{"max_held_per_trace", ta.MaxHeldPerTrace}, {"max_held", ta.MaxHeld}} {
		if b.v <= 0 {
			errs = append(errs, fmt.Errorf("trace_assembly.%s: %d must be positive", b.name, b.v))
		}
	}
	if ta.MaxSteps > 0 && ta.MaxSteps < ta.MaxStepsPerTrace {
		errs = append(errs, fmt.Errorf("trace_assembly.max_steps: %d must be at least max_steps_per_trace (%d), or one trace could never hold its steps", ta.MaxSteps, ta.MaxStepsPerTrace))
	}
	if ta.MaxHeld > 0 && ta.MaxHeld < ta.MaxHeldPerTrace {
		errs = append(errs, fmt.Errorf("trace_assembly.max_held: %d must be at least max_held_per_trace (%d)", ta.MaxHeld, ta.MaxHeldPerTrace))
	}
	return errs
}

// validate checks one SLO's name and thresholds; field is "slos[i]".
func (s *SLOConfig) validate(field string) []error {
	var errs []error
	if !sloName.MatchString(s.Name) {
		errs = append(errs, fmt.Errorf("%s.name: %q must match %s (it becomes part of an attribute key)", field, s.Name, sloName))
	}
	set := 0
	// The configuration's keys are the contract's constraint names, in
	// the order configured() lists the fields.
	for i, d := range s.configured() {
		if d == nil {
			continue
		}
		set++
		name := contract.Constraints[i]
		switch {
		case *d <= 0:
			errs = append(errs, fmt.Errorf("%s.%s: %v must be a positive duration such as 500ms", field, name, *d))
		case d.Seconds() > derive.MaxSeconds:
			errs = append(errs, fmt.Errorf("%s.%s: %v is beyond a week (168h): the processor takes longer values as corrupt, so no request could fail it", field, name, *d))
		}
	}
	fromErrs, from := s.validateFrom(field)
	errs = append(errs, fromErrs...)
	if set == 0 && from == 0 {
		errs = append(errs, fmt.Errorf("%s: set at least one of %s (or its _from)", field, strings.Join(contract.Constraints[:], ", ")))
	}
	errs = append(errs, s.validateObjective(field)...)
	if _, err := slo.ParseUnknownVerdicts(s.UnknownVerdicts); err != nil {
		errs = append(errs, fmt.Errorf("%s.unknown_verdicts: %w", field, err))
	}
	if _, err := slo.ParseQualifiedTTFT(s.QualifiedTTFT); err != nil {
		errs = append(errs, fmt.Errorf("%s.qualified_ttft: %w", field, err))
	}
	if _, err := promtime.ParsePeriod(s.Period); err != nil {
		errs = append(errs, fmt.Errorf("%s.period: %w", field, err))
	}
	return errs
}

// validateObjective refuses an objective given as a fraction (0.99 would
// mean 0.99%, so the page alert could never fire) and a period without an
// objective (it would change nothing, silently).
func (s *SLOConfig) validateObjective(field string) []error {
	o := s.Objective
	switch {
	case o == nil && s.Period != "":
		return []error{fmt.Errorf("%s.period: %q without objective changes nothing: add objective (in percent, such as 99) or remove period", field, s.Period)}
	case o == nil:
		return nil
	case *o > 0 && *o < 1:
		return []error{fmt.Errorf("%s.objective: %v is given in percent: did you mean %s?", field, *o, strconv.FormatFloat(*o*100, 'g', 10, 64))}
	case !(*o >= 1 && *o < 100):
		return []error{fmt.Errorf("%s.objective: %v must be a percentage of at least 1 and below 100, such as 99.5", field, *o)}
	}
	return nil
}

// ExcludesUnknown reports whether the SLO leaves undecidable verdicts out
// of its SLI (unknown_verdicts: exclude). Every reader of the policy asks
// here, so an unset value and "bad" cannot be read differently.
func (s *SLOConfig) ExcludesUnknown() bool {
	u, _ := slo.ParseUnknownVerdicts(s.UnknownVerdicts)
	return u == slo.UnknownExclude
}

// excludingUnknown lists the SLOs with unknown_verdicts: exclude.
func (c *Config) excludingUnknown() []string {
	var names []string
	for i := range c.SLOs {
		if c.SLOs[i].ExcludesUnknown() {
			names = append(names, c.SLOs[i].Name)
		}
	}
	return names
}

// sloNames lists the configured SLO names in order.
func (c *Config) sloNames() []string {
	names := make([]string, 0, len(c.SLOs))
	for i := range c.SLOs {
		names = append(names, c.SLOs[i].Name)
	}
	return names
}

// sloThresholds gives each SLO's configured thresholds in configuration
// order, by constraint name, for the connectors' pressure gauge.
func (c *Config) sloThresholds() []map[string]time.Duration {
	out := make([]map[string]time.Duration, len(c.SLOs))
	for i := range c.SLOs {
		out[i] = map[string]time.Duration{}
		for k, d := range c.SLOs[i].configured() {
			if d != nil {
				out[i][contract.Constraints[k]] = *d
			}
		}
	}
	return out
}

// sloDefinitions gives each SLO's definition in configuration order, in a
// form equal for equal definitions (thresholds, per-request sources,
// selector, objective, period), for the registry's duplicate check.
func (c *Config) sloDefinitions() []string {
	defs := make([]string, 0, len(c.SLOs))
	for i := range c.SLOs {
		def := c.SLOs[i]
		// Unset and "bad" are one policy: the same definition.
		u, _ := slo.ParseUnknownVerdicts(def.UnknownVerdicts)
		def.UnknownVerdicts = string(u)
		// Unset and "keep" likewise.
		q, _ := slo.ParseQualifiedTTFT(def.QualifiedTTFT)
		def.QualifiedTTFT = string(q)
		b, _ := json.Marshal(&def) // plain data: cannot fail
		defs = append(defs, string(b))
	}
	return defs
}

func (c *Config) presetNames() []string {
	names := preset.Names()
	for _, p := range c.CustomPresets {
		names = append(names, p.Name)
	}
	return names
}

// Describe says what the selector selects, "" for every request: "layer
// server; models m1, m2; deployment in prod; input_tokens <= 1024". The rules' descriptions and
// the processor's log say it the same way.
func (s *SelectorConfig) Describe() string {
	var sel []string
	if s.Layer != "" {
		sel = append(sel, "layer "+s.Layer)
	}
	if len(s.Presets) > 0 {
		sel = append(sel, "presets "+strings.Join(s.Presets, ", "))
	}
	if len(s.Models) > 0 {
		sel = append(sel, "models "+strings.Join(s.Models, ", "))
	}
	if len(s.Levels) > 0 {
		sel = append(sel, "levels "+strings.Join(s.Levels, ", "))
	}
	for _, a := range s.Attributes {
		sel = append(sel, a.Key+" in "+strings.Join(a.Values, ", "))
	}
	sel = s.InputTokens.describe("input_tokens", sel)
	sel = s.OutputTokens.describe("output_tokens", sel)
	return strings.Join(sel, "; ")
}

// validate checks the selector; presets are the known preset names and
// enabled the built-ins the configuration's presets list keeps (empty: all).
func (s *SelectorConfig) validate(field string, presets, enabled []string) []error {
	var errs []error
	if s.Layer != "" && s.Layer != preset.LayerClient && s.Layer != preset.LayerServer {
		errs = append(errs, fmt.Errorf("%s.layer: %q: allowed values are %q, %q", field, s.Layer, preset.LayerClient, preset.LayerServer))
	}
	for _, p := range s.Presets {
		switch {
		case !slices.Contains(presets, p):
			errs = append(errs, fmt.Errorf("%s.presets: unknown preset %q: allowed values are %s", field, p, strings.Join(presets, ", ")))
		case len(enabled) > 0 && !slices.Contains(enabled, p) && !slices.Contains(presets[len(preset.Names()):], p):
			errs = append(errs, fmt.Errorf("%s.presets: preset %q is excluded by presets: [%s], so the SLO would select nothing from it", field, p, strings.Join(enabled, ", ")))
		}
	}
	for _, l := range s.Levels {
		if !slices.Contains(preset.LevelNames, l) {
			errs = append(errs, fmt.Errorf("%s.levels: unknown level %q: allowed values are %s", field, l, strings.Join(preset.LevelNames, ", ")))
		}
	}
	for i, a := range s.Attributes {
		if a.Key == "" {
			errs = append(errs, fmt.Errorf("%s.attributes[%d].key: must not be empty", field, i))
		}
		if len(a.Values) == 0 {
			errs = append(errs, fmt.Errorf("%s.attributes[%d].values: list at least one value", field, i))
		}
	}
	errs = append(errs, s.InputTokens.validate(field+".input_tokens")...)
	errs = append(errs, s.OutputTokens.validate(field+".output_tokens")...)
	return errs
}

func createDefaultConfig() component.Config {
	return &Config{
		AttributePrefix: contract.DefaultPrefix,
		Parts:           PartsAuto,
		TraceAssembly: TraceAssemblyConfig{
			Wait:             6 * time.Second,
			MaxTraces:        10_000,
			MaxStepsPerTrace: 16_384,
			MaxSteps:         1_000_000,
			MaxHeldPerTrace:  64,
			MaxHeld:          10_000,
		},
	}
}
