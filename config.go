package llmsloprocessor

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/collector/component"

	"github.com/llmslo/llmslo/internal/contract"
	"github.com/llmslo/llmslo/internal/preset"
	"github.com/llmslo/llmslo/internal/promtime"
)

// Config configures the llm_slo processor.
type Config struct {
	// AttributePrefix is the namespace of every attribute the processor
	// writes. Default "llm.".
	AttributePrefix string `mapstructure:"attribute_prefix"`

	// Presets lists the built-in producer presets to recognise, in the
	// built-in matching order. Empty means all of them. Listing fewer narrows
	// which spans are treated as LLM requests.
	Presets []string `mapstructure:"presets"`

	// CustomPresets adds producers (or, under a built-in's name, replaces
	// that built-in). They are matched before the built-ins, in order.
	CustomPresets []PresetConfig `mapstructure:"custom_presets"`

	// TokenAwareITL spreads each chunk's gap over the tokens the chunk
	// carries (per-token ITL); off, each chunk is one gap (per-chunk ITL).
	TokenAwareITL bool `mapstructure:"token_aware_itl"`

	// Model says where the model name comes from when the span carries none
	// (vLLM V1 spans do not).
	Model ModelConfig `mapstructure:"model"`

	// SLOs are judged on every selected request span.
	SLOs []SLOConfig `mapstructure:"slos"`

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
	// Selector restricts the SLO to some requests; empty selects all.
	Selector SelectorConfig `mapstructure:"selector"`
	// Objective is the share of selected requests that must meet the SLO,
	// in percent (99, 99.5). It changes nothing per span: the llmslo command
	// turns it into recording rules, burn-rate alerts and a dashboard.
	Objective *float64 `mapstructure:"objective"`
	// Period is the objective's compliance window, a Prometheus duration
	// (30d, 28d, 4w); default 30d.
	Period string `mapstructure:"period"`

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
	// Attributes are span (then resource) attributes with allowed values.
	Attributes []AttributeMatchConfig `mapstructure:"attributes"`

	_ struct{}
}

// AttributeMatchConfig matches a string attribute against allowed values.
type AttributeMatchConfig struct {
	Key    string   `mapstructure:"key"`
	Values []string `mapstructure:"values"`

	_ struct{}
}

// PresetConfig defines a producer. With Extends, it starts from that
// built-in and overrides only what it sets.
type PresetConfig struct {
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

	_ struct{}
}

// MatchConfig recognises the producer's spans: one of Any and all of All.
type MatchConfig struct {
	Any []CondConfig `mapstructure:"any"`
	All []CondConfig `mapstructure:"all"`

	_ struct{}
}

// CondConfig is one test; set exactly one of SpanName, SpanNameContains,
// Attribute (optionally with Values) and Event.
type CondConfig struct {
	SpanName         string   `mapstructure:"span_name"`
	SpanNameContains string   `mapstructure:"span_name_contains"`
	Attribute        string   `mapstructure:"attribute"`
	Values           []string `mapstructure:"values"`
	Event            string   `mapstructure:"event"`

	_ struct{}
}

// AttributesConfig maps span attributes to fields; for each field the first
// key present on the span is used. A set list replaces the extended one.
type AttributesConfig struct {
	TTFT         []TimingConfig `mapstructure:"ttft"`
	E2E          []TimingConfig `mapstructure:"e2e"`
	ITLMean      []TimingConfig `mapstructure:"itl_mean"`
	QueueTime    []TimingConfig `mapstructure:"queue_time"`
	OutputTokens []string       `mapstructure:"output_tokens"`
	InputTokens  []string       `mapstructure:"input_tokens"`
	RequestN     []string       `mapstructure:"request_n"`
	Stream       []string       `mapstructure:"stream"`
	Model        []string       `mapstructure:"model"`

	_ struct{}
}

// TimingConfig names a duration attribute and its unit: "s" (default),
// "ms", "us", "ns", "duration" (strings like "1.5ms") or "timestamp" (an
// absolute time; the field is that time minus the span start).
type TimingConfig struct {
	Key  string `mapstructure:"key"`
	Unit string `mapstructure:"unit"`

	_ struct{}
}

// EventsConfig names the span events that mark output.
type EventsConfig struct {
	Chunk      []string `mapstructure:"chunk"`
	FirstToken []string `mapstructure:"first_token"`
	TokenCount string   `mapstructure:"token_count"`

	_ struct{}
}

var _ component.Config = (*Config)(nil)

// sloName is the allowed shape of an SLO name: it becomes part of an
// attribute key.
var sloName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// Validate reports every configuration error, each naming its field.
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
	seen := map[string]bool{}
	for i := range c.CustomPresets {
		p := &c.CustomPresets[i]
		if seen[p.Name] {
			errs = append(errs, fmt.Errorf("custom_presets[%d]: duplicate name %q", i, p.Name))
		}
		seen[p.Name] = true
		if _, err := p.build(); err != nil {
			errs = append(errs, fmt.Errorf("custom_presets[%d]: %w", i, err))
		}
	}
	if ta := c.TraceAssembly; ta.Enabled {
		if ta.Wait <= 0 {
			errs = append(errs, fmt.Errorf("trace_assembly.wait: %v must be a positive duration such as 6s", ta.Wait))
		}
		for _, b := range []struct {
			name string
			v    int
		}{{"max_traces", ta.MaxTraces}, {"max_steps_per_trace", ta.MaxStepsPerTrace}, {"max_steps", ta.MaxSteps}} {
			if b.v <= 0 {
				errs = append(errs, fmt.Errorf("trace_assembly.%s: %d must be positive", b.name, b.v))
			}
		}
	}
	names := map[string]bool{}
	for i := range c.SLOs {
		s := &c.SLOs[i]
		field := fmt.Sprintf("slos[%d]", i)
		if !sloName.MatchString(s.Name) {
			errs = append(errs, fmt.Errorf("%s.name: %q must match %s (it becomes part of an attribute key)", field, s.Name, sloName))
		}
		if names[s.Name] {
			errs = append(errs, fmt.Errorf("%s.name: duplicate SLO name %q", field, s.Name))
		}
		names[s.Name] = true
		set := 0
		for _, t := range []struct {
			name string
			d    *time.Duration
		}{{"ttft", s.TTFT}, {"tpot", s.TPOT}, {"itl", s.ITL}, {"e2e", s.E2E}, {"queue_time", s.QueueTime}} {
			if t.d == nil {
				continue
			}
			set++
			if *t.d <= 0 {
				errs = append(errs, fmt.Errorf("%s.%s: %v must be a positive duration such as 500ms", field, t.name, *t.d))
			}
		}
		if set == 0 {
			errs = append(errs, fmt.Errorf("%s: set at least one of ttft, tpot, itl, e2e, queue_time", field))
		}
		errs = append(errs, s.Selector.validate(field+".selector", c.presetNames())...)
		if o := s.Objective; o != nil && !(*o > 0 && *o < 100) {
			errs = append(errs, fmt.Errorf("%s.objective: %v must be a percentage strictly between 0 and 100, such as 99.5", field, *o))
		}
		if _, err := promtime.ParsePeriod(s.Period); err != nil {
			errs = append(errs, fmt.Errorf("%s.period: %w", field, err))
		}
	}
	return errors.Join(errs...)
}

func (c *Config) presetNames() []string {
	names := preset.Names()
	for _, p := range c.CustomPresets {
		names = append(names, p.Name)
	}
	return names
}

func (s *SelectorConfig) validate(field string, presets []string) []error {
	var errs []error
	if s.Layer != "" && s.Layer != preset.LayerClient && s.Layer != preset.LayerServer {
		errs = append(errs, fmt.Errorf("%s.layer: %q: allowed values are %q, %q", field, s.Layer, preset.LayerClient, preset.LayerServer))
	}
	for _, p := range s.Presets {
		if !slices.Contains(presets, p) {
			errs = append(errs, fmt.Errorf("%s.presets: unknown preset %q: allowed values are %s", field, p, strings.Join(presets, ", ")))
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
	return errs
}

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
		p.Match = preset.Match{Any: conds(pc.Match.Any), All: conds(pc.Match.All)}
	}
	a := pc.Attributes
	var err error
	for _, t := range []struct {
		name string
		src  []TimingConfig
		dst  *[]preset.TimingAttr
	}{{"ttft", a.TTFT, &p.Map.TTFT}, {"e2e", a.E2E, &p.Map.E2E}, {"itl_mean", a.ITLMean, &p.Map.ITLMean}, {"queue_time", a.QueueTime, &p.Map.QueueTime}} {
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
			*t.dst = append(*t.dst, preset.TimingAttr{Key: tc.Key, Unit: u})
		}
	}
	for _, l := range []struct {
		src []string
		dst *[]string
	}{{a.OutputTokens, &p.Map.OutputTokens}, {a.InputTokens, &p.Map.InputTokens}, {a.RequestN, &p.Map.RequestN}, {a.Stream, &p.Map.Stream}, {a.Model, &p.Map.Model}} {
		if l.src != nil {
			*l.dst = slices.Clone(l.src)
		}
	}
	if pc.Events != nil {
		p.Ev = preset.Events{Chunk: slices.Clone(pc.Events.Chunk), FirstToken: slices.Clone(pc.Events.FirstToken), TokenCount: pc.Events.TokenCount}
	}
	if pc.TTFTNeedsStreamFlag != nil {
		p.TTFTNeedsStreamFlag = *pc.TTFTNeedsStreamFlag
	}
	if verr := p.Validate(); verr != nil {
		err = errors.Join(err, verr)
	}
	return p, err
}

func conds(cs []CondConfig) []preset.Cond {
	out := make([]preset.Cond, 0, len(cs))
	for _, c := range cs {
		out = append(out, preset.Cond{SpanName: c.SpanName, SpanNameContains: c.SpanNameContains, Attribute: c.Attribute, AttributeValues: slices.Clone(c.Values), Event: c.Event})
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

func createDefaultConfig() component.Config {
	return &Config{
		AttributePrefix: contract.DefaultPrefix,
		TraceAssembly: TraceAssemblyConfig{
			Wait:             6 * time.Second,
			MaxTraces:        10_000,
			MaxStepsPerTrace: 16_384,
			MaxSteps:         1_000_000,
		},
	}
}
