// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloprocessor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/confmap/provider/envprovider"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"

	"github.com/llmslo/llmslo/internal/metadata"
)

// loadNamed decodes llm_slo/<name> of a testdata file over the defaults and
// validates it, as the collector does.
func loadNamed(t *testing.T, file, name string) (*Config, error) {
	t.Helper()
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", file))
	require.NoError(t, err)
	sub, err := cm.Sub(component.NewIDWithName(metadata.Type, name).String())
	require.NoError(t, err)
	cfg := createDefaultConfig().(*Config)
	if err := sub.Unmarshal(cfg); err != nil {
		return nil, err
	}
	return cfg, confmap.Validate(cfg)
}

// TestDurationMisconfiguration: a duration without a unit is refused with
// the fix, and the error repeats what was written, for every duration field.
func TestDurationMisconfiguration(t *testing.T) {
	const units = "(a bare number would be read as nanoseconds; units: ns, us, ms, s, m, h)"
	tests := []struct {
		name    string
		errs    []string // each must appear
		notErrs []string // none may appear
		check   func(t *testing.T, cfg *Config)
	}{
		{name: "units", check: func(t *testing.T, cfg *Config) {
			assert.Equal(t, 90*time.Second, cfg.TraceAssembly.Wait)
			s := cfg.SLOs[0]
			assert.Equal(t, 500*time.Millisecond, *s.TTFT)
			assert.Equal(t, 12500*time.Microsecond, *s.TPOT)
			assert.Equal(t, 250*time.Microsecond, *s.ITL)
			assert.Equal(t, 1500*time.Millisecond, *s.E2E)
			assert.Equal(t, 100*time.Microsecond, *s.QueueTime)
		}},
		// The first silent mistake: 500 would be 500ns and every
		// request would violate.
		{name: "bare_int", errs: []string{"slos[0].ttft: 500 has no unit: did you mean 500ms? " + units}},
		// Reported as written, not as the 0s it would truncate to.
		{name: "bare_fraction", errs: []string{"slos[0].ttft: 0.5 has no unit: did you mean 0.5s?"}, notErrs: []string{"0s must be"}},
		{name: "bare_small", errs: []string{"slos[0].e2e: 2 has no unit: did you mean 2s?"}},
		{name: "quoted_number", errs: []string{"slos[0].ttft: 500 has no unit: did you mean 500ms?"}},
		{name: "space_before_unit", errs: []string{`slos[0].ttft: "500 ms" is not a duration: write a number and a unit without a space, such as 500ms, 1.5s or 2m (units: ns, us, ms, s, m, h)`}},
		{name: "unknown_unit", errs: []string{`slos[0].ttft: "500msec" is not a duration`}},
		{name: "every_field", errs: []string{
			"trace_assembly.wait: 6 has no unit: did you mean 6s?",
			"slos[1].ttft: 500 has no unit: did you mean 500ms?",
			"slos[1].tpot: 15 has no unit: did you mean 15ms?",
			"slos[1].itl: 100 has no unit: did you mean 100ms?",
			"slos[1].e2e: 2 has no unit: did you mean 2s?",
			"slos[1].queue_time: 0.05 has no unit: did you mean 0.05s?",
		}, notErrs: []string{"slos[0]"}},
		{name: "assembly_off", errs: []string{"trace_assembly.wait: 6 has no unit: did you mean 6s?"}},
		// 0 needs no unit; validation then refuses it as not positive.
		{name: "bare_zero", errs: []string{"slos[0].ttft: 0s must be a positive duration such as 500ms"}, notErrs: []string{"has no unit"}},
		{name: "negative_bare", errs: []string{"slos[0].e2e: -5 has no unit: did you mean -5s?"}},
		{name: "boolean", errs: []string{"slos[0].ttft: true is not a duration: write a number and a unit, such as 500ms"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := loadNamed(t, "durations.yaml", tt.name)
			if len(tt.errs) == 0 {
				require.NoError(t, err)
				tt.check(t, cfg)
				return
			}
			require.Error(t, err)
			for _, e := range tt.errs {
				assert.ErrorContains(t, err, e)
			}
			for _, e := range tt.notErrs {
				assert.NotContains(t, err.Error(), e)
			}
		})
	}
}

// TestDurationFromEnvironment: a value substituted from ${env:...}, as the
// production configuration reads its settings, is checked like a literal.
func TestDurationFromEnvironment(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "collector.yaml")
	require.NoError(t, os.WriteFile(path, []byte("processors:\n  llm_slo:\n    slos:\n      - name: interactive\n        ttft: ${env:LLMSLO_TEST_TTFT}\n"), 0o600))
	for _, tt := range []struct{ env, err string }{
		{env: "500", err: "slos[0].ttft: 500 has no unit: did you mean 500ms?"},
		{env: "0.5", err: "slos[0].ttft: 0.5 has no unit: did you mean 0.5s?"},
		{env: "500ms"},
	} {
		t.Run(tt.env, func(t *testing.T) {
			t.Setenv("LLMSLO_TEST_TTFT", tt.env)
			resolver, err := confmap.NewResolver(confmap.ResolverSettings{
				URIs:              []string{"file:" + path},
				ProviderFactories: []confmap.ProviderFactory{fileprovider.NewFactory(), envprovider.NewFactory()},
			})
			require.NoError(t, err)
			conf, err := resolver.Resolve(context.Background())
			require.NoError(t, err)
			sub, err := conf.Sub("processors::llm_slo")
			require.NoError(t, err)
			cfg := createDefaultConfig().(*Config)
			err = sub.Unmarshal(cfg)
			if tt.err != "" {
				assert.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, 500*time.Millisecond, *cfg.SLOs[0].TTFT)
		})
	}
}

// TestUnknownKeys: an unknown key is named with its path and the nearest
// key ("did you mean"), or the keys of its place, never the Go type.
func TestUnknownKeys(t *testing.T) {
	for _, tt := range []struct {
		name string
		raw  map[string]any
		err  string // the message's end
	}{
		{name: "tffT", raw: map[string]any{"slos": []any{map[string]any{"name": "a", "tffT": "1s"}}},
			err: " slos[0].tffT: unknown key: did you mean ttft?"},
		{name: "slo for slos", raw: map[string]any{"slo": []any{map[string]any{"name": "a", "ttft": "1s"}}},
			err: " slo: unknown key: did you mean slos?"},
		{name: "selector slip", raw: map[string]any{"slos": []any{map[string]any{"name": "a", "ttft": "1s", "selector": map[string]any{"model": []any{"m"}}}}},
			err: " slos[0].selector.model: unknown key: did you mean models?"},
		{name: "the connector's option", raw: map[string]any{"dimensions": []any{map[string]any{"name": "tenant"}}},
			err: " dimensions: unknown key: the keys here are attribute_prefix, custom_presets, model, parts, presets, slos, token_aware_itl, trace_assembly, trust_upstream"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			err := confmap.NewFromStringMap(tt.raw).Unmarshal(cfg)
			require.Error(t, err)
			assert.True(t, strings.HasSuffix(err.Error(), tt.err), err.Error())
			assert.NotContains(t, err.Error(), "llmsloprocessor.")
		})
	}
}
