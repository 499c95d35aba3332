// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/pmetrictest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmslo/llmslo/internal/contract"
	"github.com/llmslo/llmslo/internal/registry"
)

// register records a fake processor "llm_slo" for the test's duration.
func register(t *testing.T, prefix string, slos ...string) {
	t.Helper()
	t.Cleanup(registry.Register(registry.Processor{ID: "llm_slo", Prefix: prefix, SLOs: slos}))
}

// rePrefix moves every "llm." key of the spans under prefix, as a
// processor with that attribute_prefix writes them.
func rePrefix(td ptrace.Traces, prefix string) ptrace.Traces {
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, s := range ss.Spans().All() {
				moved := pcommon.NewMap()
				for k, v := range s.Attributes().All() {
					if rest, ok := strings.CutPrefix(k, "llm."); ok {
						k = prefix + rest
					}
					v.CopyTo(moved.PutEmpty(k))
				}
				moved.CopyTo(s.Attributes())
			}
		}
	}
	return td
}

// runStarted starts a connector of cfg, consumes td and returns one flush.
func runStarted(t *testing.T, cfg *Config, td ptrace.Traces) pmetric.Metrics {
	t.Helper()
	c := newTestConnector(t, cfg, consumertest.NewNop())
	require.NoError(t, c.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, c.Shutdown(context.Background())) })
	require.NoError(t, c.ConsumeTraces(context.Background(), td))
	return c.collect(fixedNow)
}

// TestFollowsProcessor: a connector with default configuration behind a
// processor with a custom attribute_prefix emits exactly the golden
// metrics of the default prefix: it reads the prefix from the registry.
func TestFollowsProcessor(t *testing.T) {
	want, err := golden.ReadMetrics(filepath.Join("testdata", "traces", "exponential", "output.yaml"))
	require.NoError(t, err)
	for _, prefix := range []string{"llm.", "acme.llm."} {
		t.Run(prefix, func(t *testing.T) {
			register(t, prefix, "interactive", "smooth_stream")
			cfg := caseConfig(t, "exponential")
			md := runStarted(t, cfg, rePrefix(readInput(t), prefix))
			// The layer attribute is the processor's key, under its prefix.
			if prefix != "llm." {
				md = rePrefixLayer(md, prefix)
			}
			require.NoError(t, pmetrictest.CompareMetrics(want, md, compareOptions...))
		})
	}
}

// rePrefixLayer renames the layer attribute back to llm.layer, so the
// metrics compare with the golden file.
func rePrefixLayer(md pmetric.Metrics, prefix string) pmetric.Metrics {
	forPoints(md, "", func(_ pmetric.Metric, a pcommon.Map, _ any) {
		if v, ok := a.Get(prefix + "layer"); ok {
			a.PutStr("llm.layer", v.Str())
			a.Remove(prefix + "layer")
		}
	})
	return md
}

// itlSpan is a client span as the processor writes it with the given gaps
// and, if not nil, weights (packed, contract.AppendGaps); events are chunk
// events of a custom preset's name, which the connector must not need.
func itlSpan(spans ptrace.SpanSlice, gaps []float64, weights []int64) {
	s := llmSpan(spans, "m", 0.1, 0.01, 1, true)
	s.Attributes().PutEmptyBytes("llm.itl.gaps").FromRaw(contract.AppendGaps(nil, gaps))
	if weights != nil {
		s.Attributes().PutEmptyBytes("llm.itl.gap_weights").FromRaw(contract.AppendGapWeights(nil, weights))
	}
	chunkEvents(s)
}

// itlSliceSpan is itlSpan with the gaps in the slice form earlier builds
// of the processor wrote: one value per gap.
func itlSliceSpan(spans ptrace.SpanSlice, gaps []float64, weights []int64) {
	s := llmSpan(spans, "m", 0.1, 0.01, 1, true)
	g := s.Attributes().PutEmptySlice("llm.itl.gaps")
	for _, v := range gaps {
		g.AppendEmpty().SetDouble(v)
	}
	if weights != nil {
		w := s.Attributes().PutEmptySlice("llm.itl.gap_weights")
		for _, v := range weights {
			w.AppendEmpty().SetInt(v)
		}
	}
	chunkEvents(s)
}

func chunkEvents(s ptrace.Span) {
	for k := range 3 {
		e := s.Events().AppendEmpty()
		e.SetName("acme.token_chunk")
		e.SetTimestamp(s.StartTimestamp() + pcommon.Timestamp(k*10_000_000))
	}
}

// TestGapWeights: a token-aware span (a chunk of k tokens is one gap/k of
// weight k) gives the same ITL histogram and window as the same gaps
// written out one per token; a custom preset's chunk events change
// nothing, since the gaps travel on the span.
func TestGapWeights(t *testing.T) {
	weighted := batch(1, func(s ptrace.SpanSlice, _ int) {
		itlSpan(s, []float64{0.01, 0.005, 0.02}, []int64{3, 2, 1})
	})
	expanded := batch(1, func(s ptrace.SpanSlice, _ int) {
		itlSpan(s, []float64{0.01, 0.01, 0.01, 0.005, 0.005, 0.02}, nil)
	})
	cfg := caseConfig(t, "exponential")
	a, b := runStarted(t, cfg, weighted), runStarted(t, cfg, expanded)
	require.NoError(t, pmetrictest.CompareMetrics(b, a, compareOptions...))
	h := point(t, a, histNames[histITL][layerClient], nil).(pmetric.ExponentialHistogramDataPoint)
	assert.Equal(t, uint64(6), h.Count())
	assert.InDelta(t, 0.06, h.Sum(), 1e-12)
	p50 := point(t, a, windowNames[windowITL], map[string]string{attrQuantile: "0.5"}).(pmetric.NumberDataPoint)
	assert.InEpsilon(t, 0.01, p50.DoubleValue(), 0.0039)
}

// TestBadGaps: gaps that are not numbers, out of range, or weights that do
// not pair with them are rejected, never expanded.
func TestBadGaps(t *testing.T) {
	for _, tc := range []struct {
		name    string
		gaps    []float64
		weights []int64
		count   uint64
	}{
		{"negative and beyond a week", []float64{-1, 0.01, 1e9}, nil, 1},
		{"weights of another length", []float64{0.01, 0.02}, []int64{1}, 0},
		{"zero weight", []float64{0.01}, []int64{0}, 0},
		{"weights beyond 2^24 tokens in all", []float64{0.01, 0.01}, []int64{1 << 23, 1<<23 + 1}, 0},
		{"weights at 2^24 tokens in all", []float64{0.01, 0.01}, []int64{1 << 23, 1 << 23}, 1 << 24},
	} {
		for form, write := range map[string]func(ptrace.SpanSlice, []float64, []int64){"packed": itlSpan, "slice": itlSliceSpan} {
			t.Run(tc.name+"/"+form, func(t *testing.T) {
				md := runStarted(t, caseConfig(t, "exponential"), batch(1, func(s ptrace.SpanSlice, _ int) { write(s, tc.gaps, tc.weights) }))
				assert.Equal(t, int64(tc.count), sumOver(md, histNames[histITL][layerClient], nil))
			})
		}
	}
}

// TestGapForms: the slice form of the gaps earlier builds wrote gives the
// metrics of the packed form; a packed list that is not whole values, or
// weights in the other form than the gaps, is rejected whole.
func TestGapForms(t *testing.T) {
	gaps, weights := []float64{0.01, 0.005, 0.02, 0, 0.3}, []int64{3, 2, 1, 1, 4}
	cfg := caseConfig(t, "exponential")
	packed := runStarted(t, cfg, batch(3, func(s ptrace.SpanSlice, _ int) { itlSpan(s, gaps, weights) }))
	slice := runStarted(t, cfg, batch(3, func(s ptrace.SpanSlice, _ int) { itlSliceSpan(s, gaps, weights) }))
	require.NoError(t, pmetrictest.CompareMetrics(slice, packed, compareOptions...))
	assert.Equal(t, int64(3*11), sumOver(packed, histNames[histITL][layerClient], nil))

	for name, corrupt := range map[string]func(pcommon.Map){
		"gaps not whole doubles": func(a pcommon.Map) {
			a.PutEmptyBytes("llm.itl.gaps").FromRaw(contract.AppendGaps(nil, gaps)[:9])
		},
		"weights not whole": func(a pcommon.Map) {
			a.PutEmptyBytes("llm.itl.gap_weights").FromRaw(contract.AppendGapWeights(nil, weights)[:19])
		},
		"weights a slice beside packed gaps": func(a pcommon.Map) {
			w := a.PutEmptySlice("llm.itl.gap_weights")
			for _, v := range weights {
				w.AppendEmpty().SetInt(v)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			md := runStarted(t, cfg, batch(1, func(s ptrace.SpanSlice, _ int) {
				itlSpan(s, gaps, weights)
				corrupt(s.At(s.Len() - 1).Attributes())
			}))
			assert.Equal(t, int64(0), sumOver(md, histNames[histITL][layerClient], nil))
		})
	}
}

func TestResolveSource(t *testing.T) {
	for _, tc := range []struct {
		name       string
		configured string
		procs      []registry.Processor
		prefix     string
		names      []string // fixed names; nil: learned
		err        string
	}{
		{name: "no processor, default prefix", prefix: "llm."},
		{name: "no processor, configured prefix", configured: "x.", prefix: "x."},
		{name: "follows the processor", procs: []registry.Processor{{ID: "llm_slo", Prefix: "acme.", SLOs: []string{"a", "b"}}},
			prefix: "acme.", names: []string{"a", "b"}},
		{name: "configured prefix matches", configured: "acme.", procs: []registry.Processor{{ID: "llm_slo", Prefix: "acme.", SLOs: []string{"a"}}},
			prefix: "acme.", names: []string{"a"}},
		{name: "names of every processor of the prefix", procs: []registry.Processor{
			{ID: "llm_slo/a", Prefix: "llm.", SLOs: []string{"a", "b"}}, {ID: "llm_slo/b", Prefix: "llm.", SLOs: []string{"b", "c"}}},
			prefix: "llm.", names: []string{"a", "b", "c"}},
		{name: "configured prefix picks one", configured: "x.", procs: []registry.Processor{
			{ID: "llm_slo/a", Prefix: "llm.", SLOs: []string{"a"}}, {ID: "llm_slo/x", Prefix: "x.", SLOs: []string{"b"}}},
			prefix: "x.", names: []string{"b"}},
		{name: "configured prefix contradicts", configured: "llm.", procs: []registry.Processor{{ID: "llm_slo/edge", Prefix: "acme.", SLOs: []string{"a"}}},
			err: `attribute_prefix: "llm.", but the llm_slo processors of this collector write under "acme." (llm_slo/edge): ` +
				"remove attribute_prefix (the connector follows the processor) or set it to one of theirs"},
		{name: "processors disagree", procs: []registry.Processor{
			{ID: "llm_slo/a", Prefix: "a.", SLOs: []string{"x"}}, {ID: "llm_slo/b", Prefix: "b.", SLOs: []string{"x"}}},
			err: `the llm_slo processors of this collector write under different prefixes ("a." (llm_slo/a), "b." (llm_slo/b)): ` +
				"set attribute_prefix to the one this connector reads"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, err := resolveSource(tc.configured, tc.procs)
			if tc.err != "" {
				assert.EqualError(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.prefix, src.keys.Prefix)
			if tc.names == nil {
				assert.NotZero(t, src.names.learn)
				return
			}
			assert.Equal(t, tc.names, *src.names.list.Load())
			_, ok := src.names.index("unconfigured")
			assert.False(t, ok, "a fixed set learns nothing")
		})
	}
}

// TestStartRefusesContradiction: Start fails, with the processors named,
// when attribute_prefix contradicts every registered processor.
func TestStartRefusesContradiction(t *testing.T) {
	register(t, "acme.", "a")
	cfg := caseConfig(t, "exponential")
	cfg.AttributePrefix = "llm."
	c := newTestConnector(t, cfg, consumertest.NewNop())
	err := c.Start(context.Background(), componenttest.NewNopHost())
	require.ErrorContains(t, err, `write under "acme." (llm_slo)`)
	require.NoError(t, c.Shutdown(context.Background()), "shutdown after a failed start")
}

// TestLearnedNames: with no processor registered, names that follow the
// processor's rule are learned up to the bound; others never count.
func TestLearnedNames(t *testing.T) {
	n := newLearnedNames(2)
	for _, bad := range []string{"Upper", "with space", "9lives", "", strings.Repeat("a", 64), "caf\xe9"} {
		_, ok := n.index(bad)
		assert.False(t, ok, "%q", bad)
	}
	i, ok := n.index("chat")
	assert.True(t, ok)
	assert.Equal(t, 0, i)
	i, _ = n.index("batch")
	assert.Equal(t, 1, i)
	_, ok = n.index("third")
	assert.False(t, ok, "full")
	i, _ = n.index("chat")
	assert.Equal(t, 0, i)
	name, ok := n.name(1)
	assert.True(t, ok)
	assert.Equal(t, "batch", name)
	_, ok = n.name(2)
	assert.False(t, ok)
}
