// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloprocessor

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/ptracetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/llmslo/llmslo/internal/metadata"
	"github.com/llmslo/llmslo/internal/preset"
)

// customOf writes a built-in preset in the custom_presets schema, field by
// field, without extends: what a user copying the built-in would write.
func customOf(p *preset.Preset) PresetConfig {
	pc := PresetConfig{
		Name:                p.Name,
		Layer:               p.Layer,
		Match:               &MatchConfig{Any: condConfigs(p.Match.Any), All: condConfigs(p.Match.All), None: condConfigs(p.Match.None)},
		Attributes:          attributesOf(&p.Map),
		Events:              &EventsConfig{Chunk: p.Ev.Chunk, FirstToken: p.Ev.FirstToken, FirstPart: p.Ev.FirstPart, TokenCount: p.Ev.TokenCount},
		TTFTNeedsStreamFlag: &p.TTFTNeedsStreamFlag,
		StreamBySpanName:    p.StreamBySpanName,
		StreamNameAttribute: p.StreamNameAttribute,
		StreamJSON:          p.StreamJSON,
		FirstPartUnless:     p.FirstPartUnless,
	}
	if s := p.Steps; s != nil {
		pc.Steps = &StepsConfig{SpanName: s.SpanName, Time: map[preset.StepTime]string{preset.StepEnd: "end", preset.StepStart: "start"}[s.Time],
			Counter: s.Counter, FirstTokenFromSteps: s.FirstTokenFromSteps, Generation: s.Generation}
	}
	return pc
}

func condConfigs(cs []preset.Cond) []CondConfig {
	var out []CondConfig
	for _, c := range cs {
		out = append(out, CondConfig{SpanName: c.SpanName, SpanNameContains: c.SpanNameContains, Attribute: c.Attribute,
			Values: c.AttributeValues, Event: c.Event, Scope: c.Scope, SpanKind: c.SpanKind})
	}
	return out
}

func attributesOf(m *preset.Mapping) AttributesConfig {
	return AttributesConfig{
		TTFT: timings(m.TTFT), E2E: timings(m.E2E), ITLMean: timings(m.ITLMean), QueueTime: timings(m.QueueTime),
		PrefillTime: timings(m.PrefillTime), KVTransferTime: timings(m.KVTransferTime), DecodeTime: timings(m.DecodeTime),
		OutputTokens: m.OutputTokens, InputTokens: m.InputTokens, RequestN: m.RequestN, Stream: m.Stream, Model: m.Model,
		CacheReadInputTokens: m.CacheReadInputTokens, CacheWriteInputTokens: m.CacheWriteInputTokens,
		ReasoningOutputTokens: m.ReasoningOutputTokens,
	}
}

var unitSpellings = map[preset.Unit]string{preset.Seconds: "s", preset.Milliseconds: "ms", preset.Microseconds: "us",
	preset.Nanoseconds: "ns", preset.Duration: "duration", preset.Timestamp: "timestamp"}

func timings(ts []preset.TimingAttr) []TimingConfig {
	var out []TimingConfig
	for _, t := range ts {
		out = append(out, TimingConfig{Key: t.Key, Unit: unitSpellings[t.Unit], FirstPart: t.FirstPart, FirstEvent: t.FirstEvent})
	}
	return out
}

// redeclared replaces every built-in preset of cfg with its custom
// re-declaration, in the built-ins' matching order, decoded the way a
// user's configuration is: customOf's keys as YAML would give them (the
// keys left at their zero value left out).
func redeclared(t testing.TB) func(*Config) {
	return func(cfg *Config) {
		var cs []PresetConfig
		for _, p := range preset.Builtin() {
			cs = append(cs, customOf(p))
		}
		marshalled := confmap.New()
		require.NoError(t, marshalled.Marshal(map[string]any{"custom_presets": cs}))
		written := userWritten(marshalled.ToStringMap())
		cfg.CustomPresets = nil
		require.NoError(t, cfg.Unmarshal(confmap.NewFromStringMap(written.(map[string]any))))
		require.Len(t, cfg.CustomPresets, len(cs))
	}
}

// userWritten drops from v every key a user would not write: those whose
// value is "", false, or an empty list or map (a stream_by_span_name entry's
// false is a value, kept).
func userWritten(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if m, ok := e.(map[string]any); ok && k == "stream_by_span_name" && len(m) > 0 {
				out[k] = m // a span name's false is written
				continue
			}
			if e = userWritten(e); e != nil {
				out[k] = e
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	case []any:
		if len(x) == 0 {
			return nil
		}
		out := make([]any, 0, len(x))
		for _, e := range x {
			out = append(out, userWritten(e))
		}
		return out
	case string:
		if x == "" {
			return nil
		}
	case bool:
		if !x {
			return nil
		}
	}
	return v
}

// TestCustomPresetRedeclaresBuiltin: every built-in preset, written in the
// custom_presets schema, compiles to the very same preset: a field of a
// built-in the schema cannot express fails here.
func TestCustomPresetRedeclaresBuiltin(t *testing.T) {
	for _, want := range preset.Builtin() {
		t.Run(want.Name, func(t *testing.T) {
			pc := customOf(want)
			got, err := pc.Build()
			require.NoError(t, err)
			assert.Equal(t, want, got)
		})
	}
	cfg, err := loadConfig(t, "golden")
	require.NoError(t, err)
	redeclared(t)(cfg)
	require.NoError(t, cfg.Validate())
	ps, err := cfg.presets()
	require.NoError(t, err)
	assert.Equal(t, preset.Builtin(), ps, "the re-declarations replace the built-ins, in their order")
}

// pinnedGolden is the expected file the golden tests pin dir's output under
// config to, "" for none: every input's expected.yaml is the golden
// configuration's, but for the step-span traces, whose is trace
// assembly's.
func pinnedGolden(dir, config string) string {
	switch {
	case config == "golden" && dir != "sglang_trace" && dir != "tgi_trace":
		return "expected.yaml"
	case config == "token_aware" && dir == "v3":
		return "expected_token_aware.yaml"
	}
	return ""
}

// TestCustomPresetRedeclaredGoldens: every golden input comes out the same
// whether its producers' presets are the built-ins or their custom
// re-declarations, under each configuration the goldens are processed with
// and, for the step-span traces, in trace assembly; and, as the two share
// one compiler, the same as the stored golden output.
func TestCustomPresetRedeclaredGoldens(t *testing.T) {
	dirs, err := os.ReadDir(filepath.Join("testdata", "traces"))
	require.NoError(t, err)
	require.NotEmpty(t, dirs)
	for _, d := range dirs {
		for _, config := range []string{"golden", "token_aware"} {
			t.Run(d.Name()+"/"+config, func(t *testing.T) {
				in, err := golden.ReadTraces(filepath.Join("testdata", "traces", d.Name(), "input.yaml"))
				require.NoError(t, err)
				want := process(t, config, in)
				cfg, err := loadConfig(t, config)
				require.NoError(t, err)
				redeclared(t)(cfg)
				in, err = golden.ReadTraces(filepath.Join("testdata", "traces", d.Name(), "input.yaml"))
				require.NoError(t, err)
				got := processWith(t, cfg, processortest.NewNopSettings(metadata.Type), in)
				require.NoError(t, ptracetest.CompareTraces(want, got), "built-in and re-declared presets disagree")
				if file := pinnedGolden(d.Name(), config); file != "" {
					stored, err := golden.ReadTraces(filepath.Join("testdata", "traces", d.Name(), file))
					require.NoError(t, err)
					require.NoError(t, ptracetest.CompareTraces(stored, got), "the re-declared presets' output is not %s", file)
				}
			})
		}
	}
	for _, dir := range []string{"sglang_trace", "tgi_trace"} {
		t.Run(dir+"/assembly", func(t *testing.T) {
			h := newAssemblyHarness(t, redeclared(t))
			h.consume(readInput(t, dir))
			require.Len(t, h.sink.AllTraces(), 1)
			want, err := golden.ReadTraces(filepath.Join("testdata", "traces", dir, "expected.yaml"))
			require.NoError(t, err)
			require.NoError(t, ptracetest.CompareTraces(want, h.sink.AllTraces()[0]))
		})
	}
}

// TestCustomPresetEveryKey: the keys a custom preset shares with the
// built-ins' steps, stream rules and first-part rules decode from YAML onto
// the preset the processor runs.
func TestCustomPresetEveryKey(t *testing.T) {
	cfg, err := loadConfig(t, "custom_every_key")
	require.NoError(t, err)
	got, err := cfg.CustomPresets[0].Build()
	require.NoError(t, err)
	assert.Equal(t, &preset.Preset{
		Name:  "my_engine",
		Layer: preset.LayerServer,
		Match: preset.Match{Any: []preset.Cond{{SpanName: "request"}}},
		Map: preset.Mapping{TTFT: []preset.TimingAttr{
			{Key: "my.ttft_ms", Unit: preset.Milliseconds, FirstPart: true},
			{Key: "my.sse_ttft", FirstEvent: true},
		}},
		Ev:                  preset.Events{FirstToken: []string{"my.first", "my.part"}, FirstPart: []string{"my.part"}},
		StreamBySpanName:    map[string]bool{"my.stream": true, "my.generate": false},
		StreamNameAttribute: "my.operation",
		StreamJSON:          []string{"my.parameters"},
		FirstPartUnless:     []string{"my.usage.text_tokens"},
		Steps:               &preset.Steps{SpanName: "my_step", Time: preset.StepStart, Counter: "my.ct", FirstTokenFromSteps: true, Generation: "my.gen"},
	}, got)
	ps, err := cfg.presets()
	require.NoError(t, err)
	assert.Equal(t, got, ps[0], "the processor runs the custom preset first")
	assert.Equal(t, preset.Events{FirstToken: []string{"my.first", "my.part"}, FirstPart: []string{"my.part"}}, cfg.PresetEvents()["my_engine"])
}
