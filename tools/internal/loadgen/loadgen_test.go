// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// TestCalibration: at low load the default profile's means match the
// reference (Llama-3.1-8B-Instruct on TensorRT-LLM: TTFT 162 ms, TPOT
// 7.33 ms, E2E 1,093 ms) within 5%.
func TestCalibration(t *testing.T) {
	e := NewEngine(Profiles[DefaultModel], 42)
	var ttft, tpotSum, e2e float64
	n, nTPOT := 20000, 0
	for i := range n {
		r := e.Next(float64(i) * 10) // 10 s apart: never queued
		ttft += r.TTFT()
		e2e += r.E2E()
		if r.OutputTokens > 1 {
			tpotSum += (r.E2E() - r.TTFT()) / float64(r.OutputTokens-1)
			nTPOT++
		}
	}
	meanTTFT, meanTPOT, meanE2E := ttft/float64(n), tpotSum/float64(nTPOT), e2e/float64(n)
	t.Logf("mean TTFT %.1f ms, TPOT %.2f ms, E2E %.0f ms", 1000*meanTTFT, 1000*meanTPOT, 1000*meanE2E)
	assert.InEpsilon(t, 0.162, meanTTFT, 0.05)
	assert.InEpsilon(t, 0.00733, meanTPOT, 0.05)
	assert.InEpsilon(t, 1.093, meanE2E, 0.05)
}

// TestQueueGrowsWithLoad: more load, more queueing.
func TestQueueGrowsWithLoad(t *testing.T) {
	meanQueue := func(rate float64) float64 {
		e := NewEngine(Profiles[DefaultModel], 7)
		rng := rand.New(rand.NewPCG(1, 1))
		at, q := 0.0, 0.0
		for range 5000 {
			at += rng.ExpFloat64() / rate
			q += e.Next(at).Queue
		}
		return q / 5000
	}
	low, high := meanQueue(5), meanQueue(80)
	t.Logf("mean queue at 5 req/s: %.1f ms, at 80 req/s: %.1f ms", 1000*low, 1000*high)
	assert.Less(t, low, 0.001)
	assert.Greater(t, high, 10*low+0.01)
}

func TestPercentileReference(t *testing.T) {
	x := []float64{10, 20, 30, 40}
	for p, want := range map[float64]float64{25: 17.5, 50: 25, 90: 37, 95: 38.5, 99: 39.699999999999996} {
		assert.Equal(t, want, Percentile(x, p), "p%v", p)
	}
}

// TestShapes emits requests of every shape through the SDK and checks the
// spans against their truth, as the processor will read them.
func TestShapes(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	tracer := tp.Tracer("test")
	rng := rand.New(rand.NewPCG(3, 4))
	e := NewEngine(Profiles[DefaultModel], 9)
	arrival := time.Unix(1_767_225_600, 0)
	for _, shape := range Shapes {
		var req Request
		for req = e.Next(0); req.Failed || req.OutputTokens < 5; req = e.Next(0) {
		}
		exp.Reset()
		tr := Emit(tracer, shape, &req, arrival, rng, true)
		spans := exp.GetSpans()
		require.Len(t, spans, 1)
		s := spans[0]
		assert.Equal(t, s.SpanContext.SpanID().String(), tr.SpanID)
		assert.Equal(t, shape.Layer(), tr.Layer)
		start := s.StartTime
		attr := map[string]any{}
		for _, a := range s.Attributes {
			attr[string(a.Key)] = a.Value.AsInterface()
		}
		switch shape {
		case ShapeVLLM:
			assert.Equal(t, "llm_request", s.Name)
			assert.Equal(t, trace.SpanKindServer, s.SpanKind)
			assert.Equal(t, *tr.TTFT, attr["gen_ai.latency.time_to_first_token"])
			assert.Equal(t, *tr.E2E, attr["gen_ai.latency.e2e"])
			assert.Equal(t, int64(req.OutputTokens), attr["gen_ai.usage.completion_tokens"])
			assert.Empty(t, s.Events)
		case ShapeChunks:
			assert.Equal(t, "openai.chat", s.Name)
			var outputs []time.Time
			tokens := int64(0)
			for _, ev := range s.Events {
				require.Equal(t, "gen_ai.content.completion.chunk", ev.Name)
				n := ev.Attributes[0].Value.AsInt64()
				if n > 0 {
					outputs = append(outputs, ev.Time)
					tokens += n
				}
			}
			assert.Equal(t, int64(req.OutputTokens), tokens, "chunk counts add up to the usage")
			assert.InDelta(t, outputs[0].Sub(start).Seconds(), *tr.TTFT, 1e-9)
			assert.InDelta(t, outputs[len(outputs)-1].Sub(start).Seconds(), *tr.E2E, 1e-9)
			assert.Len(t, tr.ITLGaps, len(outputs)-1)
			assert.True(t, s.EndTime.After(outputs[len(outputs)-1]))
		case ShapeSemconv:
			assert.Equal(t, "chat "+req.Model, s.Name)
			assert.Equal(t, *tr.TTFT, attr["gen_ai.response.time_to_first_chunk"])
			assert.InDelta(t, s.EndTime.Sub(start).Seconds(), *tr.E2E, 1e-9)
		}
		assert.InDelta(t, (*tr.E2E-*tr.TTFT)/float64(req.OutputTokens-1), *tr.TPOT, 1e-12)
	}
}

// TestRunFast runs the generator end to end in fast mode into memory.
func TestRunFast(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	truths, err := Run(context.Background(), Config{Rate: 50, Seed: 5, Fast: true, Count: 300, ModelAttr: true,
		Models: map[string]float64{DefaultModel: 1, "qwen2.5-1.5b-instruct": 1},
		Shapes: map[Shape]float64{ShapeVLLM: 1, ShapeChunks: 1, ShapeSemconv: 1}, Exporter: exp})
	require.NoError(t, err)
	assert.Len(t, truths, 300)
	groups := Summarize(truths, SLO{TTFT: 500 * time.Millisecond})
	assert.Len(t, groups, 4, "two models, two layers")
	for _, g := range groups {
		assert.False(t, math.IsNaN(Percentile(g.TTFT, 99)))
	}
}

// TestIncident: from its start on, the incident's model has its TTFT
// multiplied and every token shifted by the same amount (TPOT unchanged);
// other models and earlier requests are untouched.
func TestIncident(t *testing.T) {
	inc := &Incident{Model: DefaultModel, After: 10 * time.Second, Factor: 20}
	require.NoError(t, inc.Check(map[string]float64{DefaultModel: 1}))
	assert.Error(t, inc.Check(map[string]float64{"qwen2.5-1.5b-instruct": 1}))
	assert.Error(t, (&Incident{Model: DefaultModel, Factor: 0}).Check(map[string]float64{DefaultModel: 1}))

	e := NewEngine(Profiles[DefaultModel], 5)
	before, after := e.Next(9.9), e.Next(10)
	b0, a0 := before, after
	b0.TokenTimes, a0.TokenTimes = append([]float64(nil), before.TokenTimes...), append([]float64(nil), after.TokenTimes...)
	inc.apply(&before, 9.9)
	inc.apply(&after, 10)
	assert.Equal(t, b0.TokenTimes, before.TokenTimes, "before the incident")
	assert.InDelta(t, 20*a0.TTFT(), after.TTFT(), 1e-12)
	assert.InDelta(t, a0.E2E()-a0.TTFT(), after.E2E()-after.TTFT(), 1e-12, "decode unchanged")
	other := NewEngine(Profiles["qwen2.5-1.5b-instruct"], 5).Next(20)
	ttft := other.TTFT()
	inc.apply(&other, 20)
	assert.Equal(t, ttft, other.TTFT(), "another model")
}
