// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

func val(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// checkParts: the parts of a truth add up to its TTFT and E2E, and a
// client span's network part is the only one an engine span lacks.
func checkParts(t *testing.T, tr *Truth) {
	t.Helper()
	if tr.Error {
		assert.Nil(t, tr.PrefillTime)
		assert.Nil(t, tr.DecodeTime)
		return
	}
	require.NotNil(t, tr.QueueTime)
	require.NotNil(t, tr.PrefillTime)
	require.NotNil(t, tr.DecodeTime)
	sum := *tr.QueueTime + *tr.PrefillTime + val(tr.KVTransferTime) + val(tr.NetworkTime)
	assert.InDelta(t, *tr.TTFT, sum, 1e-9, "TTFT = queue + prefill + kv transfer + network")
	assert.InDelta(t, *tr.E2E, *tr.TTFT+*tr.DecodeTime, 1e-9, "E2E = TTFT + decode")
	assert.Positive(t, *tr.PrefillTime)
	if tr.Layer == "server" {
		assert.Nil(t, tr.NetworkTime)
	} else {
		require.NotNil(t, tr.NetworkTime)
		assert.GreaterOrEqual(t, *tr.NetworkTime, 0.002, "two one-way delays of 1-4 ms")
	}
	if tr.Shape == ShapeTRTLLM {
		require.NotNil(t, tr.KVTransferTime)
		assert.Positive(t, *tr.KVTransferTime)
	} else {
		assert.Nil(t, tr.KVTransferTime)
	}
}

// TestPartsSum runs every shape, without and with each kind of incident,
// and checks every truth's decomposition.
func TestPartsSum(t *testing.T) {
	kinds := append([]IncidentKind{""}, IncidentKinds...)
	for _, kind := range kinds {
		t.Run(string(kind), func(t *testing.T) {
			var inc *Incident
			if kind != "" {
				inc = &Incident{Model: DefaultModel, After: 2 * time.Second, Kind: kind, Factor: 5, Delay: 300 * time.Millisecond}
			}
			shapes := map[Shape]float64{}
			for _, s := range AllShapes {
				shapes[s] = 1
			}
			truths, err := Run(context.Background(), Config{Rate: 50, Seed: 3, Fast: true, Count: 400, ModelAttr: true,
				Models: map[string]float64{DefaultModel: 1, "qwen2.5-1.5b-instruct": 1}, Shapes: shapes,
				Exporter: tracetest.NewInMemoryExporter(), Incident: inc})
			require.NoError(t, err)
			marked := 0
			for i := range truths {
				checkParts(t, &truths[i])
				if truths[i].Incident != "" {
					marked++
					assert.Equal(t, string(kind), truths[i].Incident)
					assert.Equal(t, kind.Cause(), truths[i].Cause)
					assert.Equal(t, DefaultModel, truths[i].Model)
				}
			}
			if kind == "" {
				assert.Zero(t, marked)
			} else {
				assert.Greater(t, marked, 50)
			}
		})
	}
}

// engineRequest is a successful request of the default model, with enough
// tokens for a TPOT and ITL.
func engineRequest(seed uint64) Request {
	e := NewEngine(Profiles[DefaultModel], seed)
	for {
		if r := e.Next(0); !r.Failed && r.OutputTokens >= 5 {
			return r
		}
	}
}

func clone(r Request) Request {
	r.TokenTimes = append([]float64(nil), r.TokenTimes...)
	return r
}

// TestIncidentKinds: each kind moves the part it names, by the amount it
// says, and leaves the others.
func TestIncidentKinds(t *testing.T) {
	p := Profiles[DefaultModel]
	same := func(b Request) float64 { return b.Prefill() }
	for _, c := range []struct {
		name        string
		inc         Incident
		queue       float64                 // added queue time
		prefill     func(b Request) float64 // the prefill after
		input       int                     // input-token factor
		clientDelay float64
	}{
		{"default", Incident{Model: DefaultModel, Factor: 20}, 0, func(b Request) float64 { return 20*b.TTFT() - b.Queue }, 1, 0},
		{"ttft", Incident{Model: DefaultModel, Kind: IncidentTTFT, Factor: 3}, 0, func(b Request) float64 { return 3*b.TTFT() - b.Queue }, 1, 0},
		{"queue", Incident{Model: DefaultModel, Kind: IncidentQueue, Delay: 800 * time.Millisecond}, 0.8, same, 1, 0},
		{"long_prompt", Incident{Model: DefaultModel, Kind: IncidentLongPrompt, Factor: 6}, 0, func(b Request) float64 {
			return b.Prefill() * (p.PrefillBase + p.PrefillPerToken*float64(6*b.InputTokens)) / (p.PrefillBase + p.PrefillPerToken*float64(b.InputTokens))
		}, 6, 0},
		{"network", Incident{Model: DefaultModel, Kind: IncidentNetwork, Delay: 250 * time.Millisecond}, 0, same, 1, 0.25},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := engineRequest(5)
			r := clone(base)
			c.inc.apply(&r, 0)
			assert.Equal(t, c.inc.kind(), r.Incident)
			assert.InDelta(t, base.Queue+c.queue, r.Queue, 1e-12, "queue")
			assert.InDelta(t, c.prefill(base), r.Prefill(), 1e-12, "prefill")
			assert.InDelta(t, base.Decode(), r.Decode(), 1e-12, "decode")
			assert.InDelta(t, c.clientDelay, r.ClientDelay, 1e-12, "client delay")
			assert.Zero(t, r.KVTransfer)
			assert.Equal(t, base.InputTokens*c.input, r.InputTokens)
			assert.Equal(t, base.OutputTokens, r.OutputTokens)
			if c.name == "long_prompt" {
				assert.Greater(t, r.Prefill(), 2*base.Prefill(), "six times the prompt, more than twice the prefill")
			}
		})
	}
}

// TestIncidentOnSpans: what each kind changes on an engine span (vLLM) and
// a client span (chunks) of the same request, through their truths.
func TestIncidentOnSpans(t *testing.T) {
	tracer := sdktrace.NewTracerProvider().Tracer("test")
	arrival := time.Unix(1_767_225_600, 0)
	emit := func(inc *Incident) (engine, client Truth) {
		r := engineRequest(8)
		inc.apply(&r, 0)
		engine = Emit(tracer, ShapeVLLM, &r, arrival, rand.New(rand.NewPCG(1, 2)), true)
		client = Emit(tracer, ShapeChunks, &r, arrival, rand.New(rand.NewPCG(1, 2)), true)
		return engine, client
	}
	be, bc := emit(nil)
	for _, c := range []struct {
		kind                                 IncidentKind
		engineTTFT, clientTTFT, queue, netwk float64
	}{
		{kind: IncidentQueue, engineTTFT: 0.5, clientTTFT: 0.5, queue: 0.5},
		{kind: IncidentNetwork, clientTTFT: 0.5, netwk: 0.5},
	} {
		t.Run(string(c.kind), func(t *testing.T) {
			e, cl := emit(&Incident{Model: DefaultModel, Kind: c.kind, Delay: 500 * time.Millisecond})
			assert.InDelta(t, *be.TTFT+c.engineTTFT, *e.TTFT, 1e-9, "engine TTFT")
			assert.InDelta(t, *bc.TTFT+c.clientTTFT, *cl.TTFT, 1e-9, "client TTFT")
			assert.InDelta(t, *be.QueueTime+c.queue, *e.QueueTime, 1e-9, "queue")
			assert.InDelta(t, *bc.NetworkTime+c.netwk, *cl.NetworkTime, 1e-9, "network")
			assert.InDelta(t, *be.PrefillTime, *e.PrefillTime, 1e-9, "prefill")
			assert.InDelta(t, *bc.DecodeTime, *cl.DecodeTime, 1e-9, "client decode")
			assert.InDelta(t, *bc.TPOT, *cl.TPOT, 1e-9, "client TPOT")
			assert.Equal(t, bc.ITLGaps, cl.ITLGaps)
			assert.Equal(t, c.kind.Cause(), cl.Cause)
			if c.kind == IncidentNetwork {
				assert.Empty(t, e.Cause, "a network incident leaves the engine's span as it was")
			} else {
				assert.Equal(t, c.kind.Cause(), e.Cause)
			}
		})
	}
}

func attrsOf(s tracetest.SpanStub) map[string]any {
	attr := map[string]any{}
	for _, a := range s.Attributes {
		attr[string(a.Key)] = a.Value.AsInterface()
	}
	return attr
}

// TestEngineSpanParts: the engine spans write their parts as vLLM and
// TensorRT-LLM do, and the truth carries the same values.
func TestEngineSpanParts(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tracer := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp)).Tracer("test")
	arrival := time.Unix(1_767_225_600, 0)

	r := engineRequest(9)
	vllm := Emit(tracer, ShapeVLLM, &r, arrival, nil, false)
	attr := attrsOf(exp.GetSpans()[0])
	assert.Equal(t, *vllm.QueueTime, attr["gen_ai.latency.time_in_queue"])
	assert.Equal(t, *vllm.PrefillTime, attr["gen_ai.latency.time_in_model_prefill"])
	assert.Equal(t, *vllm.DecodeTime, attr["gen_ai.latency.time_in_model_decode"])
	assert.InDelta(t, *vllm.PrefillTime+*vllm.DecodeTime, attr["gen_ai.latency.time_in_model_inference"], 1e-12)
	assert.Equal(t, "vllm", vllm.Service)

	exp.Reset()
	d := clone(r)
	d.disaggregate(Profiles[DefaultModel], rand.New(rand.NewPCG(1, 1)))
	trt := Emit(tracer, ShapeTRTLLM, &d, arrival, nil, true)
	s := exp.GetSpans()[0]
	attr = attrsOf(s)
	assert.Equal(t, "llm_request", s.Name)
	assert.Equal(t, trace.SpanKindServer, s.SpanKind)
	assert.Equal(t, *trt.KVTransferTime, attr["gen_ai.latency.kv_cache_transfer_time"])
	assert.Equal(t, *trt.TTFT, attr["gen_ai.latency.time_to_first_token"])
	assert.NotContains(t, attr, "gen_ai.latency.time_in_model_prefill")
	assert.InDelta(t, r.TTFT()+d.KVTransfer, *trt.TTFT, 1e-12, "KV transfer adds to TTFT")
	assert.InDelta(t, *vllm.PrefillTime, *trt.PrefillTime, 1e-12, "prefill unchanged")
	assert.InDelta(t, *vllm.TPOT, *trt.TPOT, 1e-12, "TPOT unchanged")
	require.Len(t, s.Events, 2)
	assert.Equal(t, "kv_cache_transfer_start", s.Events[0].Name)
	assert.InDelta(t, *trt.KVTransferTime, s.Events[1].Time.Sub(s.Events[0].Time).Seconds(), 1e-9)
	assert.Equal(t, "trtllm", trt.Service)
	checkParts(t, &trt)
}

// TestKVGrowsWithPrompt: the KV transfer of a prompt 8 times longer takes
// about 8 times the per-token part longer.
func TestKVGrowsWithPrompt(t *testing.T) {
	p := Profiles[DefaultModel]
	short, long := Request{InputTokens: 500, TokenTimes: []float64{0.1}}, Request{InputTokens: 4000, TokenTimes: []float64{0.1}}
	short.disaggregate(p, rand.New(rand.NewPCG(4, 4)))
	long.disaggregate(p, rand.New(rand.NewPCG(4, 4)))
	assert.InDelta(t, (p.KVBase+4000*p.KVPerToken)/(p.KVBase+500*p.KVPerToken), long.KVTransfer/short.KVTransfer, 1e-12)
	assert.InDelta(t, 0.1+long.KVTransfer, long.TTFT(), 1e-15)
}

// TestJoined: the client span and, as its child in its trace, the engine
// span; the engine's is exported first.
func TestJoined(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tracer := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp)).Tracer("test")
	r := engineRequest(12)
	engine, client, end := EmitJoined(tracer, tracer, &r, time.Unix(1_767_225_600, 0), rand.New(rand.NewPCG(5, 6)), true)
	require.Len(t, exp.GetSpans(), 1, "the client span ends later")
	end()
	spans := exp.GetSpans()
	require.Len(t, spans, 2)
	es, cs := spans[0], spans[1]
	assert.Equal(t, trace.SpanKindServer, es.SpanKind)
	assert.Equal(t, trace.SpanKindClient, cs.SpanKind)
	assert.Equal(t, cs.SpanContext.TraceID(), es.SpanContext.TraceID())
	assert.Equal(t, cs.SpanContext.SpanID(), es.Parent.SpanID(), "the engine span is the client's child")
	assert.Equal(t, engine.TraceID, client.TraceID)
	assert.Equal(t, es.SpanContext.SpanID().String(), engine.SpanID)
	assert.Equal(t, cs.SpanContext.SpanID().String(), client.SpanID)
	assert.True(t, cs.StartTime.Before(es.StartTime) && cs.EndTime.After(es.EndTime), "the call contains the engine's work")
	assert.Equal(t, [2]string{"server", "client"}, [2]string{engine.Layer, client.Layer})
	assert.Equal(t, [2]string{"vllm-rag", "rag-app"}, [2]string{engine.Service, client.Service})
	assert.InDelta(t, *client.TTFT-*engine.TTFT, *client.NetworkTime, 1e-15)
	checkParts(t, &engine)
	checkParts(t, &client)
}

// keeper keeps the spans exported to it in order, through shutdown.
type keeper struct {
	mu    sync.Mutex
	spans []sdktrace.ReadOnlySpan
}

func (k *keeper) ExportSpans(_ context.Context, spans []sdktrace.ReadOnlySpan) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.spans = append(k.spans, spans...)
	return nil
}

func (k *keeper) Shutdown(context.Context) error { return nil }

// TestRunJoined: a run's joined traces reach the exporter engine span
// first, and give two truths each.
func TestRunJoined(t *testing.T) {
	exp := &keeper{}
	truths, err := Run(context.Background(), Config{Rate: 50, Seed: 5, Fast: true, Count: 200, ModelAttr: true,
		Models: map[string]float64{DefaultModel: 1}, Shapes: map[Shape]float64{ShapeJoined: 1, ShapeVLLM: 1}, Exporter: exp})
	require.NoError(t, err)
	joined := 0
	for _, tr := range truths {
		if tr.Shape == ShapeJoined && tr.Layer == "client" {
			joined++
		}
	}
	assert.Len(t, truths, 200+joined)
	assert.Greater(t, joined, 60)
	seen := map[trace.TraceID]trace.SpanKind{}
	for _, s := range exp.spans {
		id := s.SpanContext().TraceID()
		if s.SpanKind() == trace.SpanKindClient {
			assert.Equal(t, trace.SpanKindServer, seen[id], "the engine span of %s came first", id)
		}
		seen[id] = s.SpanKind()
	}
	assert.Len(t, exp.spans, len(truths))
}

func TestIncidentCheck(t *testing.T) {
	models := map[string]float64{DefaultModel: 1}
	for _, c := range []struct {
		inc Incident
		err string
	}{
		{Incident{Model: DefaultModel, Factor: 20}, ""},
		{Incident{Model: DefaultModel, Kind: IncidentQueue, Delay: time.Second}, ""},
		{Incident{Model: DefaultModel, Kind: IncidentLongPrompt, Factor: 8}, ""},
		{Incident{Model: DefaultModel, Kind: IncidentNetwork, Delay: time.Millisecond}, ""},
		{Incident{Model: "other", Factor: 2}, `incident model "other" is not one of the run's models`},
		{Incident{Model: DefaultModel, Kind: "gpu", Factor: 2}, `incident: unknown incident kind "gpu": known are ttft, queue, long_prompt, network`},
		{Incident{Model: DefaultModel, Factor: 2, After: -time.Second}, "incident: start -1s must not be negative"},
		{Incident{Model: DefaultModel, Kind: IncidentQueue, Factor: 2}, "incident queue: delay 0s must be positive"},
		{Incident{Model: DefaultModel, Kind: IncidentNetwork, Delay: -time.Second}, "incident network: delay -1s must be positive"},
		{Incident{Model: DefaultModel, Kind: IncidentLongPrompt, Delay: time.Second}, "incident long_prompt: factor 0 must be positive"},
	} {
		err := c.inc.Check(models)
		if c.err == "" {
			assert.NoError(t, err)
		} else {
			assert.EqualError(t, err, c.err)
		}
	}
}

// TestRunJoinedRealTime: in real time, too, the client span of a joined
// trace is exported after its engine span, and every span is exported
// before Run returns.
func TestRunJoinedRealTime(t *testing.T) {
	exp := &keeper{}
	truths, err := Run(context.Background(), Config{Rate: 40, Seed: 2, Duration: 300 * time.Millisecond,
		Models: map[string]float64{"qwen2.5-1.5b-instruct": 1}, Shapes: map[Shape]float64{ShapeJoined: 1}, Exporter: exp})
	require.NoError(t, err)
	require.NotEmpty(t, truths)
	assert.Len(t, exp.spans, len(truths))
	server := map[trace.TraceID]bool{}
	for _, s := range exp.spans {
		if s.SpanKind() == trace.SpanKindServer {
			server[s.SpanContext().TraceID()] = true
		} else {
			assert.True(t, server[s.SpanContext().TraceID()], "engine span first")
		}
	}
}
