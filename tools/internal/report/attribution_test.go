// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	llmsloprocessor "github.com/llmslo/llmslo"
	"github.com/llmslo/llmslo/internal/contract"
	"github.com/llmslo/llmslo/internal/otlpio"
	"github.com/llmslo/llmslo/tools/internal/report/render"
	"github.com/llmslo/llmslo/tools/internal/report/schema"
)

// causeDirs are the processor's cause goldens, one rule each.
func causeDirs(t *testing.T) []string {
	dirs, err := filepath.Glob("../../../testdata/slos/causes/*")
	require.NoError(t, err)
	require.NotEmpty(t, dirs)
	return dirs
}

// causesOptions run the report with the cause goldens' processor
// configuration (llm_slo/causes of the processor's testdata), parts
// written as llmslo report writes them.
func causesOptions(t *testing.T) Options {
	cm, err := confmaptest.LoadConf("../../../testdata/config.yaml")
	require.NoError(t, err)
	sub, err := cm.Sub("llm_slo/causes")
	require.NoError(t, err)
	cfg := llmsloprocessor.NewFactory().CreateDefaultConfig().(*llmsloprocessor.Config)
	require.NoError(t, sub.Unmarshal(cfg))
	cfg.Parts = llmsloprocessor.PartsAlways
	require.NoError(t, confmap.Validate(cfg))
	return Options{Processor: NewProcessor(llmsloprocessor.NewFactory(), cfg), ProcessorID: "llm_slo/causes"}
}

// TestGoldenAttribution: the report of every cause golden's input: the
// attribution section (text) and the whole JSON. LLMSLO_HTML=file keeps
// its HTML page, to look at.
func TestGoldenAttribution(t *testing.T) {
	r := attributionReport(t, "input.yaml")
	var txt, js, page bytes.Buffer
	require.NoError(t, render.WriteText(&txt, r))
	require.NoError(t, render.WriteJSON(&js, r))
	require.NoError(t, render.WriteHTML(&page, r))
	if out := os.Getenv("LLMSLO_HTML"); out != "" {
		require.NoError(t, os.WriteFile(out, page.Bytes(), 0o644))
	}
	checkGolden(t, "testdata/golden/attribution.txt", txt.Bytes())
	checkGolden(t, "testdata/golden/attribution.json", js.Bytes())
}

func attributionReport(t *testing.T, file string) *Report {
	e, err := NewEngine(context.Background(), causesOptions(t))
	require.NoError(t, err)
	for _, dir := range causeDirs(t) {
		td, err := golden.ReadTraces(filepath.Join(dir, file))
		require.NoError(t, err)
		require.NoError(t, e.Consume(context.Background(), td))
	}
	require.NoError(t, e.Close(context.Background()))
	return e.Report([]string{"testdata/slos/causes"})
}

// TestAttributionCountsTheProcessorsCauses: the report's counts by SLO,
// constraint and cause over every request equal the causes entries of the
// processor's expected output, counted here separately.
func TestAttributionCountsTheProcessorsCauses(t *testing.T) {
	want := map[string]int64{}
	keys := contract.NewKeys("llm.")
	for _, dir := range causeDirs(t) {
		td, err := golden.ReadTraces(filepath.Join(dir, "expected.yaml"))
		require.NoError(t, err)
		otlpio.Spans(td, func(_ ptrace.ResourceSpans, s ptrace.Span) {
			s.Attributes().Range(func(k string, v pcommon.Value) bool {
				if name, ok := keys.ParseSLOCausesKey(k); ok {
					for _, entry := range v.Slice().AsRaw() {
						want[name+" "+entry.(string)]++
					}
				}
				return true
			})
		})
	}
	require.NotEmpty(t, want)
	got := map[string]int64{}
	for _, a := range attributionReport(t, "input.yaml").Attribution {
		for _, c := range a.Groups[0].Constraints {
			var sum int64
			for _, cc := range c.Causes {
				got[a.SLO+" "+c.Constraint+":"+cc.Cause] += cc.Requests
				sum += cc.Requests
			}
			assert.Equal(t, c.Misses, sum, "%s %s: causes add up to the misses", a.SLO, c.Constraint)
		}
	}
	assert.Equal(t, want, got)
}

// TestAttributionSameFromEnrichedSpans: spans a collector already enriched
// give the same attribution as the producers' raw spans.
func TestAttributionSameFromEnrichedSpans(t *testing.T) {
	raw, enriched := attributionReport(t, "input.yaml"), attributionReport(t, "expected.yaml")
	a, err := json.Marshal(raw.Attribution)
	require.NoError(t, err)
	b, err := json.Marshal(enriched.Attribution)
	require.NoError(t, err)
	assert.JSONEq(t, string(a), string(b))
}

// TestSlowMissParts: a slow miss's rest is E2E less its known parts, never
// negative, null without an E2E.
func TestSlowMissParts(t *testing.T) {
	nan := schema.NaN()
	tests := []struct {
		name string
		p    parts
		e2e  float64
		rest schema.Num
	}{
		{"queue and prefill", parts{0.5, 0.2, float64(nan), float64(nan), 1.0}, 2.0, 0.30000000000000004},
		{"none known", unknownParts(), 1.5, 1.5},
		{"parts exceed e2e", parts{1, 1, 0, 0, 1}, 2.5, 0},
		{"no e2e", parts{0.1, 0.1, 0, 0, 0}, float64(nan), nan},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := missParts(tt.p, tt.e2e)["rest"]
			if !tt.rest.Valid() {
				assert.False(t, got.Valid())
				return
			}
			assert.Equal(t, tt.rest, got)
		})
	}
}

// TestCauseBits: a causes attribute packs the first entry of each
// constraint; words outside the closed set and non-lists read as none.
func TestCauseBits(t *testing.T) {
	list := func(entries ...string) pcommon.Value {
		v := pcommon.NewValueSlice()
		for _, e := range entries {
			v.Slice().AppendEmpty().SetStr(e)
		}
		return v
	}
	ttft, e2e := 0, 3
	tests := []struct {
		name      string
		val       pcommon.Value
		ttft, e2e int // cause index, -1 none
	}{
		{"two constraints", list("ttft:queue", "e2e:output_length"), int(contract.CauseQueue), int(contract.CauseOutputLength)},
		{"first entry of a constraint counts", list("ttft:prefill", "ttft:queue"), int(contract.CausePrefill), -1},
		{"forged words", list("ttft:gremlins", "bogus", "e2e:"), -1, -1},
		{"not a list", pcommon.NewValueStr("ttft:queue"), -1, -1},
		{"empty", list(), -1, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bits := causeBitsOf(tt.val)
			assert.Equal(t, tt.ttft, causeOf(bits, ttft))
			assert.Equal(t, tt.e2e, causeOf(bits, e2e))
		})
	}
}
