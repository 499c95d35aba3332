// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloprocessor

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/llmslo/llmslo/internal/metadata"
	"github.com/llmslo/llmslo/internal/preset"
)

// allPresets is how a refusal lists the built-in presets: the table's
// order, so a new preset changes no test.
var allPresets = strings.Join(preset.Names(), ", ")

func dur(d time.Duration) *time.Duration { return &d }
func boolp(b bool) *bool                 { return &b }

func loadConfig(t *testing.T, name string) (*Config, error) { return loadConfigF(t, name) }

func loadConfigF(t testing.TB, name string) (*Config, error) {
	t.Helper()
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	id := component.NewID(metadata.Type)
	if name != "" {
		id = component.NewIDWithName(metadata.Type, name)
	}
	sub, err := cm.Sub(id.String())
	require.NoError(t, err)
	cfg := createDefaultConfig().(*Config)
	require.NoError(t, sub.Unmarshal(cfg))
	return cfg, confmap.Validate(cfg)
}

func TestLoadConfig(t *testing.T) {
	tests := []struct {
		name     string
		expected *Config
		errs     []string
	}{
		{name: "", expected: createDefaultConfig().(*Config)},
		{
			name: "full",
			expected: &Config{
				AttributePrefix: "llmslo.",
				Presets:         []string{"vllm", "openllmetry", "semconv"},
				TokenAwareITL:   true,
				Parts:           "auto",
				Model:           ModelConfig{ResourceAttribute: "k8s.deployment.name", Default: "unknown-model"},
				TraceAssembly:   TraceAssemblyConfig{Enabled: true, Wait: 3 * time.Second, MaxTraces: 500, MaxStepsPerTrace: 16_384, MaxSteps: 1_000_000, MaxHeldPerTrace: 64, MaxHeld: 10_000},
				CustomPresets: []PresetConfig{
					{
						Name:  "my_gateway",
						Layer: "client",
						Match: &MatchConfig{
							Any: []CondConfig{{SpanName: "llm.gateway.request"}},
							All: []CondConfig{{Attribute: "gateway.route", Values: []string{"chat", "completions"}}},
						},
						Attributes: AttributesConfig{
							TTFT:         []TimingConfig{{Key: "gateway.ttft_ms", Unit: "ms"}},
							E2E:          []TimingConfig{{Key: "gateway.total_time", Unit: "duration"}},
							OutputTokens: []string{"gateway.output_tokens"},
							Stream:       []string{"gateway.stream"},
							Model:        []string{"gateway.model"},
						},
						Events: &EventsConfig{Chunk: []string{"gateway.chunk"}, TokenCount: "gateway.chunk_tokens"},
					},
					{Name: "openlit", Extends: "openlit", TTFTNeedsStreamFlag: boolp(false)},
				},
				SLOs: []SLOConfig{{
					Name: "interactive", TTFT: dur(500 * time.Millisecond), TPOT: dur(15 * time.Millisecond),
					ITL: dur(100 * time.Millisecond), E2E: dur(2 * time.Second), QueueTime: dur(100 * time.Millisecond),
					Selector: SelectorConfig{
						Layer:      "client",
						Presets:    []string{"my_gateway", "openllmetry"},
						Models:     []string{"llama-3.1-8b-instruct"},
						Attributes: []AttributeMatchConfig{{Key: "deployment.environment.name", Values: []string{"production"}}},
					},
				}},
			},
		},
		{name: "invalid_slo_name", errs: []string{`slos[0].name: "Interactive-SLO" must match ^[a-z][a-z0-9_]*$ (it becomes part of an attribute key)`}},
		{name: "no_thresholds", errs: []string{"slos[0]: set at least one of ttft, tpot, itl, e2e, queue_time"}},
		{name: "bad_from", errs: []string{
			`slos[0].ttft_from.key: must not be empty`,
			`slos[0].ttft_from.unit: unknown unit "minutes": allowed values are "s", "ms", "us", "ns"`,
			`slos[0].tpot_from.unit: unknown unit "h": allowed values are "s", "ms", "us", "ns"`,
			`slos[0].e2e_from.unit: unknown unit "duration": allowed values are "s", "ms", "us", "ns"`,
		}},
		{name: "from_unbounded", errs: []string{"slos[0].ttft_from.max: set it, or ttft, to the loosest threshold a request may ask for: without either, a sender chooses its own SLO"}},
		{name: "from_bad_max", errs: []string{
			"slos[0].ttft_from.max: 200ms is below ttft (500ms): a request may always tighten the configured threshold, so max only loosens it",
			"slos[0].e2e_from.max: 0s must be a positive duration of at most a week, such as 2s",
		}},
		{name: "negative_threshold", errs: []string{"slos[0].ttft: -1s must be a positive duration such as 500ms"}},
		{name: "duplicate_slo", errs: []string{`slos[1].name: duplicate SLO name "a"`}},
		{name: "unknown_preset", errs: []string{`presets: unknown preset "triton": allowed values are ` + allPresets}},
		{name: "bad_custom_preset_keys", errs: []string{
			`custom_presets[0]: attributes.ttft[0]: first_part and first_event exclude each other`,
			`custom_presets[0]: events.first_part[0]: "part" is not one of events.first_token`,
			`custom_presets[0]: steps.span_name: must not be empty`,
			`custom_presets[0]: steps.time: "middle": allowed values are "end", "start"`,
		}},
		{name: "bad_assembly", errs: []string{
			"trace_assembly.wait: 0s must be a positive duration such as 6s",
			"trace_assembly.max_steps: -1 must be positive",
		}},
		{name: "steps_below_per_trace", errs: []string{"trace_assembly.max_steps: 100 must be at least max_steps_per_trace (1000), or one trace could never hold its steps"}},
		{name: "excluded_preset", errs: []string{`slos[0].selector.presets: preset "openllmetry" is excluded by presets: [vllm, semconv], so the SLO would select nothing from it`}},
		{name: "bad_parts", errs: []string{`parts: "sometimes": allowed values are auto, always, never`}},
		{name: "bad_prefix", errs: []string{`attribute_prefix: "llm" must end with "."`}},
		{name: "bad_selector", errs: []string{
			`slos[0].selector.layer: "edge": allowed values are "client", "server"`,
			`slos[0].selector.presets: unknown preset "nope": allowed values are ` + allPresets,
			`slos[0].selector.levels: unknown level "sdk": allowed values are framework, provider, unstated`,
			`slos[0].selector.attributes[0].key: must not be empty`,
			`slos[0].selector.attributes[0].values: list at least one value`,
		}},
		{name: "bad_tokens", errs: []string{
			`slos[0].selector.input_tokens.min: 1.5 must be a whole number of tokens from 0 to 16777216`,
			`slos[0].selector.input_tokens.max: -1 must be a whole number of tokens from 0 to 16777216`,
			`slos[0].selector.output_tokens: min 200 is above max 100, so the SLO would select no request`,
			`slos[1].selector.input_tokens: set min, max or both (inclusive token counts), or remove it`,
			`slos[1].selector.output_tokens.max: 16777217 must be a whole number of tokens from 0 to 16777216`,
		}},
		{name: "bad_custom_preset", errs: []string{
			`custom_presets[0]: attributes.ttft[0].unit: unknown unit "minutes": allowed values are "s", "ms", "us", "ns", "duration", "timestamp"`,
			`preset "broken": layer "middle": allowed values are "client", "server"`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := loadConfig(t, tt.name)
			if len(tt.errs) > 0 {
				require.Error(t, err)
				for _, e := range tt.errs {
					assert.ErrorContains(t, err, e)
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.expected, cfg)
		})
	}
}

func TestUnmarshalEmptyIsDefault(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	require.NoError(t, confmap.New().Unmarshal(cfg))
	assert.Equal(t, createDefaultConfig(), cfg)
	assert.NoError(t, cfg.Validate())
}

func TestPresetOrder(t *testing.T) {
	cfg, err := loadConfig(t, "full")
	require.NoError(t, err)
	presets, err := cfg.presets()
	require.NoError(t, err)
	var names []string
	for _, p := range presets {
		names = append(names, p.Name)
	}
	// Custom presets first (a custom "openlit" replaces the built-in), then
	// the selected built-ins in built-in order.
	assert.Equal(t, []string{"my_gateway", "openlit", "vllm", "openllmetry", "semconv"}, names)
}
