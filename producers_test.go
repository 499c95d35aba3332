// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloprocessor

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/ptracetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/llmslo/llmslo/internal/metadata"
	"github.com/llmslo/llmslo/internal/preset"
)

// producerGoldens are the producers added in 2026 (and the streaming rule
// by convention version), one directory each, processed with the golden
// configuration. Their expected values are checked by hand in
// internal/derive (TestProducers2026).
var producerGoldens = []string{
	"strands", "unit_collision", "vercel_ai", "semconv_v141", "stream_schema",
	"sentry", "pydantic_ai", "vllm_usage", "node_sdks", "plausibility",
}

// stackGoldens are stacked SDK instrumentations (the shapes real stacks
// emit: a framework over a provider SDK, one exporter over another
// library's spans).
var stackGoldens = []string{"sdk_stacks"}

func TestGoldenProducers(t *testing.T) {
	for _, dir := range append(slices.Clone(producerGoldens), stackGoldens...) {
		t.Run(dir, func(t *testing.T) {
			compareGolden(t, filepath.Join("testdata", "traces", dir), "input.yaml", "expected.yaml")
		})
	}
}

func compareGolden(t *testing.T, dir, input, expected string) {
	t.Helper()
	in, err := golden.ReadTraces(filepath.Join(dir, input))
	require.NoError(t, err)
	got := process(t, "golden", in)
	if *update {
		require.NoError(t, golden.WriteTracesToFile(filepath.Join(dir, expected), got))
	}
	want, err := golden.ReadTraces(filepath.Join(dir, expected))
	require.NoError(t, err)
	require.NoError(t, ptracetest.CompareTraces(want, got))
}

// mixedSources are the golden inputs merged, resource by resource, into
// testdata/traces/mixed/input.yaml: every preset in one request, under many
// resources and scopes.
var mixedSources = append([]string{
	"vllm", "sglang", "trtllm", "tgi_trace", "sglang_trace", "openllmetry", "openllmetry_legacy", "openlit",
	"openinference", "semconv", "langfuse", "litellm", "v1", "v3", "non_llm", "hostile",
}, append(slices.Clone(producerGoldens), stackGoldens...)...)

// mixedInput merges the mixedSources' inputs, resource by resource, in
// their order.
func mixedInput(t *testing.T) ptrace.Traces {
	out := ptrace.NewTraces()
	for _, src := range mixedSources {
		in, err := golden.ReadTraces(filepath.Join("testdata", "traces", src, "input.yaml"))
		require.NoError(t, err)
		in.ResourceSpans().MoveAndAppendTo(out.ResourceSpans())
	}
	return out
}

// TestMixedBatch: all producers in one request come out span for span as
// each producer's spans do alone, so no preset claims another's spans, and
// the processor's telemetry counts every preset, each exactly. The input is
// generated from the sources (-update writes it), never edited by hand.
func TestMixedBatch(t *testing.T) {
	dir := filepath.Join("testdata", "traces", "mixed")
	if *update {
		require.NoError(t, golden.WriteTracesToFile(filepath.Join(dir, "input.yaml"), mixedInput(t)))
	}
	stored, err := golden.ReadTraces(filepath.Join(dir, "input.yaml"))
	require.NoError(t, err)
	require.NoError(t, ptracetest.CompareTraces(mixedInput(t), stored),
		"mixed/input.yaml is not the merge of mixedSources: run go test . -run TestMixedBatch -update")
	compareGolden(t, dir, "input.yaml", "expected.yaml")

	alone := map[pcommon.SpanID]ptrace.Span{}
	wantRequests := map[string]int64{}
	for _, src := range mixedSources {
		in, err := golden.ReadTraces(filepath.Join("testdata", "traces", src, "input.yaml"))
		require.NoError(t, err)
		eachSpan(process(t, "golden", in), func(s ptrace.Span) {
			require.NotContains(t, alone, s.SpanID(), "span ids must be unique across the merged inputs")
			alone[s.SpanID()] = s
			if src, ok := s.Attributes().Get("llm.metrics.source"); ok {
				name, _, _ := strings.Cut(src.Str(), ":")
				wantRequests[name]++
			}
		})
	}

	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	set := processortest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	cfg, err := loadConfig(t, "golden")
	require.NoError(t, err)
	in, err := golden.ReadTraces(filepath.Join(dir, "input.yaml"))
	require.NoError(t, err)
	mixed := processWith(t, cfg, set, in)

	seen := 0
	eachSpan(mixed, func(s ptrace.Span) {
		seen++
		a, ok := alone[s.SpanID()]
		require.True(t, ok, "span %s of the mixed batch is in no source: regenerate mixed/input.yaml", s.SpanID())
		assert.Equal(t, a.Attributes().AsRaw(), s.Attributes().AsRaw(), "span %s %q", s.SpanID(), s.Name())
	})
	assert.Equal(t, len(alone), seen, "the mixed batch holds every span of its sources")

	m, err := tel.GetMetric("otelcol_processor_llm_slo_requests")
	require.NoError(t, err)
	got := map[string]int64{}
	for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
		p, _ := dp.Attributes.Value("preset")
		got[p.AsString()] += dp.Value
	}
	assert.Equal(t, wantRequests, got)
	for _, name := range preset.Names() {
		assert.Positive(t, got[name], "preset %s claims no span of the mixed batch", name)
	}
}

func eachSpan(td ptrace.Traces, fn func(ptrace.Span)) {
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, s := range ss.Spans().All() {
				fn(s)
			}
		}
	}
}

// TestCustomPresetOnScope: a custom preset matches on the instrumentation
// scope, the span kind and a condition that must not hold, and reads token
// details, from the configuration.
func TestCustomPresetOnScope(t *testing.T) {
	cfg, err := loadConfig(t, "custom_scope")
	require.NoError(t, err)
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
	ss.Scope().SetName("my.agent.tracer")
	s := ss.Spans().AppendEmpty()
	s.SetName("chat")
	s.SetKind(ptrace.SpanKindInternal)
	s.SetStartTimestamp(1_767_225_600_000_000_000)
	s.SetEndTimestamp(1_767_225_601_000_000_000)
	s.Attributes().PutInt("my.ttft_ms", 125)
	s.Attributes().PutInt("my.cached", 64)
	s.Attributes().PutInt("my.thinking", 12)
	out := processWith(t, cfg, processortest.NewNopSettings(metadata.Type), td)
	got := out.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes().AsRaw()
	assert.Equal(t, "my_agent:attributes", got["llm.metrics.source"])
	assert.Equal(t, 0.125, got["llm.ttft"])
	assert.Equal(t, true, got["llm.stream"])
	assert.Equal(t, int64(64), got["llm.cache_read.input_tokens"])
	assert.Equal(t, int64(12), got["llm.reasoning.output_tokens"])
}

// TestIdempotentProducers: the mixed batch processed by two collector tiers
// comes out as if processed once.
func TestIdempotentProducers(t *testing.T) {
	in, err := golden.ReadTraces(filepath.Join("testdata", "traces", "mixed", "input.yaml"))
	require.NoError(t, err)
	once := process(t, "golden", in)
	again := ptrace.NewTraces()
	once.CopyTo(again)
	require.NoError(t, ptracetest.CompareTraces(once, process(t, "golden", again)))
}

// TestHeldSpanKeepsSchemaURLs: a request span the trace assembly holds back
// comes out with its resource's and scope's schema_url (the streaming rule
// reads them when the held span is derived again).
func TestHeldSpanKeepsSchemaURLs(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.TraceAssembly.Enabled = true
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.SetSchemaUrl("https://opentelemetry.io/schemas/1.41.0")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.SetSchemaUrl("https://opentelemetry.io/schemas/1.37.0")
	ss.Scope().SetName("sglang")
	s := ss.Spans().AppendEmpty()
	s.SetName(" Req 1a2b3c4d")
	s.SetTraceID(pcommon.TraceID{9})
	s.SetStartTimestamp(1_767_225_600_000_000_000)
	s.SetEndTimestamp(1_767_225_600_900_000_000)
	require.NoError(t, s.Attributes().FromRaw(map[string]any{"rid": "1a2b3c4d", "gen_ai.latency.time_to_first_token": 0.2,
		"gen_ai.latency.e2e": 0.9, "gen_ai.usage.completion_tokens": 5}))

	out := processWith(t, cfg, processortest.NewNopSettings(metadata.Type), td) // held, then emitted at shutdown
	require.Equal(t, 1, out.SpanCount())
	gotRS := out.ResourceSpans().At(0)
	assert.Equal(t, "https://opentelemetry.io/schemas/1.41.0", gotRS.SchemaUrl())
	assert.Equal(t, "https://opentelemetry.io/schemas/1.37.0", gotRS.ScopeSpans().At(0).SchemaUrl())
	src, _ := gotRS.ScopeSpans().At(0).Spans().At(0).Attributes().Get("llm.metrics.source")
	assert.Equal(t, "sglang:attributes", src.Str())
}

// TestOneLevelCountsEachCallOnce: with selector.levels [provider,
// unstated], the SLO judges the provider SDK's span of each doubly
// instrumented call (LangChain.js over an instrumented OpenAI client, under
// Traceloop and under OpenInference) and every span that states no level,
// never the framework's: one verdict per call.
func TestOneLevelCountsEachCallOnce(t *testing.T) {
	in, err := golden.ReadTraces(filepath.Join("testdata", "traces", "sdk_stacks", "input.yaml"))
	require.NoError(t, err)
	var judged []string
	eachSpan(process(t, "one_level", in), func(s ptrace.Span) {
		_, met := s.Attributes().Get("llm.slo.calls.met")
		_, violated := s.Attributes().Get("llm.slo.calls.violations")
		if met || violated {
			judged = append(judged, s.SpanID().String())
		}
	})
	assert.Equal(t, []string{
		"a100000000000001", "a100000000000003", "a100000000000004", "a100000000000005", "a100000000000006",
		"a100000000000007", "a100000000000008", "a100000000000010", "a100000000000012",
	}, judged)
}
