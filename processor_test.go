// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloprocessor

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/ptracetest"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/llmslo/llmslo/internal/contract"
	"github.com/llmslo/llmslo/internal/metadata"
)

var update = flag.Bool("update", false, "rewrite the expected golden files from the current output")

// process runs td through a processor built from the named configuration.
func process(t testing.TB, configName string, td ptrace.Traces) ptrace.Traces {
	t.Helper()
	cfg, err := loadConfigF(t, configName)
	require.NoError(t, err)
	return processWith(t, cfg, processortest.NewNopSettings(metadata.Type), td)
}

func processWith(t testing.TB, cfg *Config, set processor.Settings, td ptrace.Traces) ptrace.Traces {
	t.Helper()
	sink := new(consumertest.TracesSink)
	p, err := NewFactory().CreateTraces(context.Background(), set, cfg, sink)
	require.NoError(t, err)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	require.NoError(t, p.ConsumeTraces(context.Background(), td))
	require.NoError(t, p.Shutdown(context.Background()))
	require.Len(t, sink.AllTraces(), 1)
	return sink.AllTraces()[0]
}

// TestGolden runs every producer's sample traces through the processor and
// compares the result with the expected file beside them. The expected
// values are checked by hand in TestDerivedValues; this test pins the whole
// output, attribute for attribute.
func TestGolden(t *testing.T) {
	cases := []struct {
		dir, config, expected string
	}{
		{"vllm", "golden", "expected.yaml"},
		{"sglang", "golden", "expected.yaml"},
		{"trtllm", "golden", "expected.yaml"},
		{"openllmetry", "golden", "expected.yaml"},
		{"openllmetry_legacy", "golden", "expected.yaml"},
		{"openlit", "golden", "expected.yaml"},
		{"openinference", "golden", "expected.yaml"},
		{"semconv", "golden", "expected.yaml"},
		{"langfuse", "golden", "expected.yaml"},
		{"litellm", "golden", "expected.yaml"},
		{"v1", "golden", "expected.yaml"},
		{"v3", "golden", "expected.yaml"},
		{"v3", "token_aware", "expected_token_aware.yaml"},
		{"non_llm", "golden", "expected.yaml"},
		{"hostile", "golden", "expected.yaml"},
	}
	for _, tc := range cases {
		t.Run(tc.dir+"/"+tc.config, func(t *testing.T) {
			dir := filepath.Join("testdata", "traces", tc.dir)
			input, err := golden.ReadTraces(filepath.Join(dir, "input.yaml"))
			require.NoError(t, err)
			got := process(t, tc.config, input)
			expectedFile := filepath.Join(dir, tc.expected)
			if *update {
				require.NoError(t, golden.WriteTracesToFile(expectedFile, got))
			}
			want, err := golden.ReadTraces(expectedFile)
			require.NoError(t, err)
			require.NoError(t, ptracetest.CompareTraces(want, got))
		})
	}
}

// TestIdempotent: a span processed twice (two collector tiers) comes out as
// if processed once.
func TestIdempotent(t *testing.T) {
	for _, dir := range []string{"vllm", "openllmetry", "semconv", "v1", "hostile"} {
		t.Run(dir, func(t *testing.T) {
			input, err := golden.ReadTraces(filepath.Join("testdata", "traces", dir, "input.yaml"))
			require.NoError(t, err)
			once := process(t, "golden", input)
			again := ptrace.NewTraces()
			once.CopyTo(again)
			twice := process(t, "golden", again)
			require.NoError(t, ptracetest.CompareTraces(once, twice))
		})
	}
}

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(m.Run())
}

// TestRunsOfSpans: the processor derives a run of spans before it writes
// them (phaseSpans). Every producer's spans, repeated past several runs and
// interleaved with copies already processed (which carry the processor's
// keys), come out span for span as each span processed alone, with and
// without trust_upstream.
func TestRunsOfSpans(t *testing.T) {
	dirs, err := os.ReadDir(filepath.Join("testdata", "traces"))
	require.NoError(t, err)
	for _, trust := range []bool{false, true} {
		cfg, err := loadConfigF(t, "golden")
		require.NoError(t, err)
		cfg.TrustUpstream = trust
		for _, dir := range dirs {
			t.Run(fmt.Sprintf("%s/trust_upstream=%v", dir.Name(), trust), func(t *testing.T) {
				input, err := golden.ReadTraces(filepath.Join("testdata", "traces", dir.Name(), "input.yaml"))
				require.NoError(t, err)
				together := repeatedWithProcessed(input, process(t, "golden", cloneTraces(input)), 3*phaseSpans+5)
				got := processWith(t, cfg, processortest.NewNopSettings(metadata.Type), cloneTraces(together))
				alone := spanBySpan(t, cfg, together)
				requireSameSpans(t, alone, got)
			})
		}
	}
}

func cloneTraces(td ptrace.Traces) ptrace.Traces {
	out := ptrace.NewTraces()
	td.CopyTo(out)
	return out
}

// repeatedWithProcessed gives each ScopeSpans of input at least n spans:
// its own, then the same spans as processed, in turn.
func repeatedWithProcessed(input, processed ptrace.Traces, n int) ptrace.Traces {
	out := cloneTraces(input)
	for i, rs := range out.ResourceSpans().All() {
		for j, ss := range rs.ScopeSpans().All() {
			sources := []ptrace.SpanSlice{
				input.ResourceSpans().At(i).ScopeSpans().At(j).Spans(),
				processed.ResourceSpans().At(i).ScopeSpans().At(j).Spans(),
			}
			for k := 0; ss.Spans().Len() < n && sources[0].Len() > 0; k++ {
				src := sources[k%2]
				for _, sp := range src.All() {
					sp.CopyTo(ss.Spans().AppendEmpty())
				}
			}
		}
	}
	return out
}

// spanBySpan processes every span of td in a batch of its own (under a copy
// of its resource and scope, schema URLs included) through one processor, and puts the results
// back in td's layout.
func spanBySpan(t *testing.T, cfg *Config, td ptrace.Traces) ptrace.Traces {
	sink := new(consumertest.TracesSink)
	p, err := NewFactory().CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, sink)
	require.NoError(t, err)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	defer func() { require.NoError(t, p.Shutdown(context.Background())) }()
	out := cloneTraces(td)
	for _, rs := range out.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				one := ptrace.NewTraces()
				ors := one.ResourceSpans().AppendEmpty()
				rs.Resource().CopyTo(ors.Resource())
				ors.SetSchemaUrl(rs.SchemaUrl())
				oss := ors.ScopeSpans().AppendEmpty()
				ss.Scope().CopyTo(oss.Scope())
				oss.SetSchemaUrl(ss.SchemaUrl())
				sp.CopyTo(oss.Spans().AppendEmpty())
				require.NoError(t, p.ConsumeTraces(context.Background(), one))
				last := sink.AllTraces()[len(sink.AllTraces())-1]
				last.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).CopyTo(sp)
			}
		}
	}
	return out
}

// requireSameSpans compares two traces of the same layout span by span, in
// place: the spans repeat, so matching them by name and IDs would pair them
// up arbitrarily.
// notJudgedView is the attributes a span processed alone should have in
// its batch: the same, except for a span of a call judged on another span
// of the batch (wrappers.go), which keeps only its reason.
func notJudgedView(alone, inBatch ptrace.Span) map[string]any {
	want := alone.Attributes().AsRaw()
	e, _ := inBatch.Attributes().Get("llm.metrics.error")
	if e.Str() != "span:wraps_judged" && e.Str() != "span:inside_judged" {
		return want
	}
	keys := contract.NewKeys(contract.DefaultPrefix)
	for k := range want {
		if keys.Owns(k) {
			delete(want, k)
		}
	}
	want["llm.metrics.error"] = e.Str()
	return want
}

func requireSameSpans(t *testing.T, want, got ptrace.Traces) {
	require.Equal(t, want.SpanCount(), got.SpanCount())
	for i, rs := range want.ResourceSpans().All() {
		for j, ss := range rs.ScopeSpans().All() {
			gotSpans := got.ResourceSpans().At(i).ScopeSpans().At(j).Spans()
			for k, sp := range ss.Spans().All() {
				require.Equal(t, notJudgedView(sp, gotSpans.At(k)), gotSpans.At(k).Attributes().AsRaw(), "resource %d, scope %d, span %d (%s)", i, j, k, sp.Name())
			}
		}
	}
}
