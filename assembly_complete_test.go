// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloprocessor

import (
	"context"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/ptracetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/llmslo/llmslo/internal/metadata"
)

// stepPieces returns the step spans of the golden trace dir at the given
// positions (0-based, in the file's order), one batch per piece.
func stepPieces(t *testing.T, dir string, pieces ...[]int) []ptrace.Traces {
	steps, _ := split(readInput(t, dir), isStepSpan)
	out := make([]ptrace.Traces, 0, len(pieces))
	for _, piece := range pieces {
		td := ptrace.NewTraces()
		steps.CopyTo(td)
		keep := map[int]bool{}
		for _, i := range piece {
			keep[i] = true
		}
		k := 0
		td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().RemoveIf(func(ptrace.Span) bool {
			k++
			return !keep[k-1]
		})
		out = append(out, td)
	}
	return out
}

// want is what a released request span carries: values, keys that must be
// absent, the error text, the progress attributes and the violations.
type want struct {
	values  map[string]float64
	missing []string
	errText string
	// seen and expected: llm.assembly.steps_seen / _expected; -1 absent.
	seen, expected int64
	violations     []any
}

func (w want) check(t *testing.T, s ptrace.Span) {
	t.Helper()
	for k, v := range w.values {
		assert.InDelta(t, v, num(t, s, k), 1e-9, k)
	}
	for _, k := range w.missing {
		_, ok := s.Attributes().Get(k)
		assert.False(t, ok, "%s must be absent", k)
	}
	errText, _ := s.Attributes().Get("llm.metrics.error")
	assert.Equal(t, w.errText, errText.Str())
	for key, n := range map[string]int64{"llm.assembly.steps_seen": w.seen, "llm.assembly.steps_expected": w.expected} {
		v, ok := s.Attributes().Get(key)
		if n < 0 {
			assert.False(t, ok, "%s must be absent", key)
			continue
		}
		if assert.True(t, ok, key) {
			assert.Equal(t, n, v.Int(), key)
		}
	}
	viol, ok := s.Attributes().Get("llm.slo.interactive.violations")
	if w.violations == nil {
		assert.False(t, ok, "violations")
	} else if assert.True(t, ok, "violations") {
		assert.Equal(t, w.violations, viol.Slice().AsRaw())
	}
}

// The steps' values, absent when a request is derived from its own span.
var stepKeys = []string{"llm.itl.gaps", "llm.itl.max", "llm.itl.mean"}

// TestAssemblyIncompleteSteps: a request whose steps are not all there
// when the wait passes or the collector shuts down gets only its own
// span's values, marked assembly:incomplete with the steps seen and
// expected; never ITL from part of its steps (SGLang's steps 1-4 of 5 gave
// an ITL max of 90 ms, the true one is 400 ms: a wrong "met").
func TestAssemblyIncompleteSteps(t *testing.T) {
	sglangOwn := want{values: map[string]float64{"llm.ttft": 0.2, "llm.e2e": 0.9, "llm.tpot": 0.14, "llm.output_tokens": 6},
		missing: stepKeys, errText: "assembly:incomplete", seen: 4, expected: 5, violations: []any{"itl:unknown"}}
	tgiOwn := want{values: map[string]float64{"llm.e2e": 1.0, "llm.queue_time": 0.0112},
		missing: append([]string{"llm.ttft", "llm.tpot", "llm.output_tokens"}, stepKeys...),
		errText: "ttft:not_emitted,output_tokens:not_emitted,assembly:incomplete", seen: 1, expected: -1,
		violations: []any{"ttft:unknown", "tpot:unknown", "itl:unknown"}}
	for _, tt := range []struct {
		name, dir, request string
		steps              []int
		shutdown           bool
		want               want
	}{
		{"sglang, last step missing, at the wait", "sglang_trace", " Req 1a2b3c4d", []int{0, 1, 2, 3}, false, sglangOwn},
		{"sglang, last step missing, at shutdown", "sglang_trace", " Req 1a2b3c4d", []int{0, 1, 2, 3}, true, sglangOwn},
		{"tgi, only the prefill step, at the wait", "tgi_trace", "chat_completions", []int{0}, false, tgiOwn},
		{"tgi, only the prefill step, at shutdown", "tgi_trace", "chat_completions", []int{0}, true, tgiOwn},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newAssemblyHarness(t, nil)
			_, rest := split(readInput(t, tt.dir), isStepSpan)
			h.consume(rest)
			h.consume(stepPieces(t, tt.dir, tt.steps)[0])
			assert.Empty(t, h.spans()[tt.request], "held: its steps are incomplete")
			if tt.shutdown {
				require.NoError(t, h.p.Shutdown(context.Background()))
			} else {
				h.advance(2 * time.Second)
			}
			got := h.spans()[tt.request]
			require.Len(t, got, 1)
			tt.want.check(t, got[0])
		})
	}
}

// TestAssemblyWaitsForEveryStep: the step with the last counter (SGLang)
// or a first step (TGI) does not complete a request whose other steps are
// missing; when they arrive, in any order, the request comes out exactly
// as with every step in one batch.
func TestAssemblyWaitsForEveryStep(t *testing.T) {
	for _, tt := range []struct {
		name, dir, request string
		pieces             [][]int
	}{
		{"sglang, first and last step, then the middle", "sglang_trace", " Req 1a2b3c4d", [][]int{{0, 4}, {2, 1, 3}}},
		{"sglang, shuffled pieces", "sglang_trace", " Req 1a2b3c4d", [][]int{{3}, {4, 0}, {2}, {1}}},
		{"tgi, first step, then the rest", "tgi_trace", "chat_completions", [][]int{{0}, {1, 2}, {3, 4}}},
		{"tgi, last step first", "tgi_trace", "chat_completions", [][]int{{4}, {2, 0}, {3, 1}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newAssemblyHarness(t, nil)
			_, rest := split(readInput(t, tt.dir), isStepSpan)
			pieces := stepPieces(t, tt.dir, tt.pieces...)
			h.consume(rest)
			for _, p := range pieces[:len(pieces)-1] {
				h.consume(p)
				assert.Empty(t, h.spans()[tt.request], "held: steps missing")
			}
			h.consume(pieces[len(pieces)-1])
			got := h.spans()[tt.request]
			require.Len(t, got, 1)
			direct := newAssemblyHarness(t, nil)
			direct.consume(readInput(t, tt.dir))
			require.NoError(t, ptracetest.CompareSpan(direct.spans()[tt.request][0], got[0]))
			_, ok := got[0].Attributes().Get("llm.metrics.error")
			assert.False(t, ok)
		})
	}
}

// TestAssemblyStepsBeforeRequest: steps that arrive before their request
// in shuffled pieces complete it at once, exactly.
func TestAssemblyStepsBeforeRequest(t *testing.T) {
	for _, dir := range []string{"sglang_trace", "tgi_trace"} {
		t.Run(dir, func(t *testing.T) {
			h := newAssemblyHarness(t, nil)
			_, rest := split(readInput(t, dir), isStepSpan)
			for _, p := range stepPieces(t, dir, []int{4, 1}, []int{3}, []int{0, 2}) {
				h.consume(p)
			}
			h.consume(rest)
			direct := newAssemblyHarness(t, nil)
			direct.consume(readInput(t, dir))
			for name, ss := range direct.spans() {
				if _, ok := ss[0].Attributes().Get("llm.metrics.source"); ok {
					require.Len(t, h.spans()[name], 1, name)
					require.NoError(t, ptracetest.CompareSpan(ss[0], h.spans()[name][0]), name)
				}
			}
		})
	}
}

// TestAssemblyIncompleteCounted: the processor's telemetry counts the
// requests let go with steps missing, by field and reason, beside the
// requests: otelcol_processor_llm_slo_errors{field="assembly",
// reason="incomplete"}.
func TestAssemblyIncompleteCounted(t *testing.T) {
	cfg, err := loadConfig(t, "assembly")
	require.NoError(t, err)
	tel := componenttest.NewTelemetry()
	defer func() { require.NoError(t, tel.Shutdown(context.Background())) }()
	set := processortest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	sink := new(consumertest.TracesSink)
	impl, err := newProcessor(set, cfg, sink)
	require.NoError(t, err)
	p := impl.wrap(t, set, cfg, sink)
	for _, dir := range []string{"sglang_trace", "tgi_trace"} {
		_, rest := split(readInput(t, dir), isStepSpan)
		require.NoError(t, p.ConsumeTraces(context.Background(), rest))
		require.NoError(t, p.ConsumeTraces(context.Background(), stepPieces(t, dir, []int{0, 1})[0]))
	}
	require.NoError(t, p.Shutdown(context.Background()))
	m, err := tel.GetMetric("otelcol_processor_llm_slo_errors")
	require.NoError(t, err)
	got := map[string]int64{}
	for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
		f, _ := dp.Attributes.Value("field")
		r, _ := dp.Attributes.Value("reason")
		got[f.AsString()+":"+r.AsString()] = dp.Value
	}
	assert.Equal(t, map[string]int64{"assembly:incomplete": 2, "ttft:not_emitted": 1, "output_tokens:not_emitted": 1}, got)
}
