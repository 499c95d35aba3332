// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Shape is a producer's way of putting a request on a span.
type Shape string

const (
	// ShapeVLLM is vLLM's llm_request SERVER span with gen_ai.latency.*.
	ShapeVLLM Shape = "vllm"
	// ShapeChunks is an OpenLLMetry-style CLIENT span with one
	// gen_ai.content.completion.chunk event per streamed chunk; some chunks
	// carry several tokens, and role-only and usage-only chunks carry 0.
	ShapeChunks Shape = "chunks"
	// ShapeSemconv is a GenAI semantic-convention CLIENT span with only
	// gen_ai.response.time_to_first_chunk.
	ShapeSemconv Shape = "semconv"
	// ShapeTRTLLM is TensorRT-LLM's llm_request SERVER span in
	// disaggregated serving: TTFT, E2E, queue time and
	// gen_ai.latency.kv_cache_transfer_time, with the kv_cache_transfer_start
	// and _end events; no prefill or decode time.
	ShapeTRTLLM Shape = "trtllm"
	// ShapeJoined is a traced client's call to its engine: a ShapeChunks
	// client span and, as its child in the same trace, a ShapeVLLM engine
	// span, from two services. It gives two truths, one per span.
	ShapeJoined Shape = "joined"
)

// Shapes are the single-span shapes of the default mix (the demo's and
// the end-to-end tests').
var Shapes = []Shape{ShapeVLLM, ShapeChunks, ShapeSemconv}

// AllShapes lists every shape.
var AllShapes = []Shape{ShapeVLLM, ShapeChunks, ShapeSemconv, ShapeTRTLLM, ShapeJoined}

// Layer returns the shape's llm.layer (for ShapeJoined its client span's;
// its engine span's is server).
func (s Shape) Layer() string {
	if s == ShapeVLLM || s == ShapeTRTLLM {
		return "server"
	}
	return "client"
}

// Service is the service.name of the shape's producer (for ShapeJoined
// its client's; Services has both).
func (s Shape) Service() string { return s.Services()[0] }

// Services are the service.name of the shape's producers: one, or for
// ShapeJoined the client's and the engine's.
func (s Shape) Services() []string {
	switch s {
	case ShapeVLLM:
		return []string{"vllm"}
	case ShapeChunks:
		return []string{"chat-app"}
	case ShapeTRTLLM:
		return []string{"trtllm"}
	case ShapeJoined:
		return []string{"rag-app", "vllm-rag"}
	default:
		return []string{"gateway"}
	}
}

// Truth is the ground truth of one span, computed with the project's
// formulas from the timings written on it. Durations in seconds; a nil
// pointer is a value the span does not give, except for the parts.
//
// The parts are the generator's decomposition of the request, set on
// every span of a request that produced tokens, whether the span shows
// them or not (docs/development.md says which shape shows which): TTFT =
// queue + prefill + kv_transfer (+ network on a client span), E2E = TTFT +
// decode. Engine spans (vllm, trtllm) also give a failed request's queue
// time. Incident and Cause name the incident that changed the span's
// timings and the part it added to.
type Truth struct {
	TraceID        string    `json:"trace_id"`
	SpanID         string    `json:"span_id"`
	Model          string    `json:"model"`
	Shape          Shape     `json:"shape"`
	Layer          string    `json:"layer"`
	Service        string    `json:"service"`
	Error          bool      `json:"error"`
	TTFT           *float64  `json:"ttft,omitempty"`
	TPOT           *float64  `json:"tpot,omitempty"`
	E2E            *float64  `json:"e2e,omitempty"`
	ITLMean        *float64  `json:"itl_mean,omitempty"`
	ITLMax         *float64  `json:"itl_max,omitempty"`
	ITLGaps        []float64 `json:"itl_gaps,omitempty"`
	QueueTime      *float64  `json:"queue_time,omitempty"`
	PrefillTime    *float64  `json:"prefill_time,omitempty"`
	KVTransferTime *float64  `json:"kv_transfer_time,omitempty"`
	NetworkTime    *float64  `json:"network_time,omitempty"`
	DecodeTime     *float64  `json:"decode_time,omitempty"`
	Incident       string    `json:"incident,omitempty"`
	Cause          string    `json:"cause,omitempty"`
	OutputTokens   int       `json:"output_tokens,omitempty"`
	InputTokens    int       `json:"input_tokens,omitempty"`
	StartUnixNano  int64     `json:"start_unix_nano"`
	// Replica is an engine span's service.instance.id; InFlight the
	// replica's engine spans in flight at its start (span start <= it <
	// span end), itself included.
	Replica  string `json:"replica,omitempty"`
	InFlight int    `json:"in_flight,omitempty"`
}

func ptr(v float64) *float64 { return &v }

func sec(d time.Duration) float64 { return float64(d) / 1e9 }

// tpot is (E2E - TTFT)/(N - 1), defined for N >= 2.
func tpot(ttft, e2e float64, n int) *float64 {
	if n < 2 {
		return nil
	}
	return ptr((e2e - ttft) / float64(n-1))
}

// Emit writes req as a span of shape through tracer, arriving at the engine
// at arrival, and returns its truth. rng decides chunking and network delay.
// ShapeJoined's two spans are EmitJoined's; Emit writes both through tracer
// and returns the client span's truth.
func Emit(tracer trace.Tracer, shape Shape, req *Request, arrival time.Time, rng *rand.Rand, modelAttr bool) Truth {
	switch shape {
	case ShapeVLLM:
		return emitVLLM(context.Background(), tracer, ShapeVLLM, req, arrival, modelAttr)
	case ShapeChunks:
		return emitChunks(tracer, req, arrival, rng)
	case ShapeTRTLLM:
		return emitTRTLLM(tracer, req, arrival, modelAttr)
	case ShapeJoined:
		_, client, end := EmitJoined(tracer, tracer, req, arrival, rng, modelAttr)
		end()
		return client
	default:
		return emitSemconv(tracer, req, arrival, rng)
	}
}

// EmitJoined writes a traced client's call to its engine: the client span
// (chunk events, as ShapeChunks) through client and, as its child in the
// same trace, the engine's llm_request span (as ShapeVLLM) through engine.
// The engine span is ended at once; end ends the client span (with its
// own timestamps): call it once the engine span is exported, so that a
// collector sees the engine's view first, the order in which trace
// assembly joins them.
func EmitJoined(client, engine trace.Tracer, req *Request, arrival time.Time, rng *rand.Rand, modelAttr bool) (engineTruth, clientTruth Truth, end func()) {
	span, ct, endAt := chunkSpan(context.Background(), client, ShapeJoined, req, arrival, rng)
	et := emitVLLM(trace.ContextWithSpan(context.Background(), span), engine, ShapeJoined, req, arrival, modelAttr)
	sc := span.SpanContext()
	ct.TraceID, ct.SpanID = sc.TraceID().String(), sc.SpanID().String()
	return et, ct, func() { span.End(trace.WithTimestamp(endAt)) }
}

func finish(span trace.Span, tr *Truth, end time.Time) Truth {
	sc := span.SpanContext()
	tr.TraceID, tr.SpanID = sc.TraceID().String(), sc.SpanID().String()
	span.End(trace.WithTimestamp(end))
	return *tr
}

// engineParts sets the truth's parts of an engine span (a request that
// produced tokens): the engine's queue, prefill, KV transfer and decode,
// as the span's own attributes compute them.
func engineParts(tr *Truth, req *Request) {
	tr.QueueTime = ptr(req.Queue)
	tr.PrefillTime = ptr(req.TTFT() - req.Queue - req.KVTransfer)
	if req.KVTransfer > 0 {
		tr.KVTransferTime = ptr(req.KVTransfer)
	}
	tr.DecodeTime = ptr(req.E2E() - req.TTFT())
	mark(tr, req, false)
}

// clientParts sets the truth's parts of a client span whose TTFT and E2E
// are set: the engine's, then the network as the client's TTFT less the
// engine's (what a join of the two spans computes), and decode as the
// client sees it.
func clientParts(tr *Truth, req *Request) {
	engineParts(tr, req)
	tr.NetworkTime = ptr(*tr.TTFT - req.TTFT())
	tr.DecodeTime = ptr(*tr.E2E - *tr.TTFT)
	mark(tr, req, true)
}

// mark names the incident that changed the request on its truth; a
// network incident changes only client spans.
func mark(tr *Truth, req *Request, client bool) {
	if req.Incident == "" || req.Incident == IncidentNetwork && !client {
		return
	}
	tr.Incident, tr.Cause = string(req.Incident), req.Incident.Cause()
}

func engineTruth(shape Shape, service string, req *Request, arrival time.Time) Truth {
	return Truth{Model: req.Model, Shape: shape, Layer: "server", Service: service, StartUnixNano: arrival.UnixNano(),
		QueueTime: ptr(req.Queue), InputTokens: req.InputTokens, Replica: req.Replica, InFlight: req.InFlight}
}

func engineAttrs(req *Request, arrival time.Time, modelAttr bool) []attribute.KeyValue {
	attrs := []attribute.KeyValue{
		attribute.String("gen_ai.request.id", fmt.Sprintf("cmpl-%x", arrival.UnixNano())),
		attribute.Int("gen_ai.request.max_tokens", 1024),
		attribute.Int("gen_ai.usage.prompt_tokens", req.InputTokens),
		attribute.Float64("gen_ai.latency.time_in_queue", req.Queue),
	}
	if modelAttr {
		attrs = append(attrs, attribute.String("gen_ai.response.model", req.Model))
	}
	return attrs
}

// emitVLLM writes vLLM's span as a child of ctx's span, if any. Its
// times are vLLM's: time_in_queue = scheduled - queued, prefill = first
// token - scheduled, decode = last token - first token, inference =
// last token - scheduled (the generator has no time between the arrival
// and the queue: TTFT = queue + prefill).
func emitVLLM(ctx context.Context, tracer trace.Tracer, shape Shape, req *Request, arrival time.Time, modelAttr bool) Truth {
	tr := engineTruth(shape, shape.Services()[len(shape.Services())-1], req, arrival)
	_, span := tracer.Start(ctx, "llm_request", trace.WithSpanKind(trace.SpanKindServer), trace.WithTimestamp(arrival))
	attrs := engineAttrs(req, arrival, modelAttr)
	if req.Failed {
		tr.Error = true
		span.SetAttributes(attrs...)
		span.SetStatus(codes.Error, "engine error")
		return finish(span, &tr, serverEnd(req, arrival))
	}
	ttft, e2e := req.TTFT(), req.E2E()
	attrs = append(attrs,
		attribute.Int("gen_ai.usage.completion_tokens", req.OutputTokens),
		attribute.Float64("gen_ai.latency.time_to_first_token", ttft),
		attribute.Float64("gen_ai.latency.e2e", e2e),
		attribute.Float64("gen_ai.latency.time_in_model_prefill", ttft-req.Queue),
		attribute.Float64("gen_ai.latency.time_in_model_decode", e2e-ttft),
		attribute.Float64("gen_ai.latency.time_in_model_inference", e2e-req.Queue),
	)
	span.SetAttributes(attrs...)
	tr.TTFT, tr.E2E, tr.OutputTokens = ptr(ttft), ptr(e2e), req.OutputTokens
	tr.TPOT = tpot(ttft, e2e, req.OutputTokens)
	engineParts(&tr, req)
	// vLLM ends the span when its output processor handles the final
	// output, a little after the last token.
	return finish(span, &tr, serverEnd(req, arrival))
}

// emitTRTLLM writes TensorRT-LLM's span: its times in seconds, the KV
// transfer (0 when the request was not disaggregated) as an attribute and
// as the events around it, ending at the first token.
func emitTRTLLM(tracer trace.Tracer, req *Request, arrival time.Time, modelAttr bool) Truth {
	tr := engineTruth(ShapeTRTLLM, ShapeTRTLLM.Service(), req, arrival)
	_, span := tracer.Start(context.Background(), "llm_request", trace.WithSpanKind(trace.SpanKindServer), trace.WithTimestamp(arrival))
	attrs := engineAttrs(req, arrival, modelAttr)
	if req.Failed {
		tr.Error = true
		span.SetAttributes(attrs...)
		span.SetStatus(codes.Error, "engine error")
		return finish(span, &tr, serverEnd(req, arrival))
	}
	ttft, e2e := req.TTFT(), req.E2E()
	span.SetAttributes(append(attrs,
		attribute.Int("gen_ai.usage.completion_tokens", req.OutputTokens),
		attribute.Float64("gen_ai.latency.time_to_first_token", ttft),
		attribute.Float64("gen_ai.latency.e2e", e2e),
		attribute.Float64("gen_ai.latency.kv_cache_transfer_time", req.KVTransfer),
	)...)
	if req.KVTransfer > 0 {
		span.AddEvent("kv_cache_transfer_start", trace.WithTimestamp(arrival.Add(Durations(ttft-req.KVTransfer))))
		span.AddEvent("kv_cache_transfer_end", trace.WithTimestamp(arrival.Add(Durations(ttft))))
	}
	tr.TTFT, tr.E2E, tr.OutputTokens = ptr(ttft), ptr(e2e), req.OutputTokens
	tr.TPOT = tpot(ttft, e2e, req.OutputTokens)
	engineParts(&tr, req)
	return finish(span, &tr, serverEnd(req, arrival))
}

func clientAttrs(req *Request) []attribute.KeyValue {
	return []attribute.KeyValue{
		attribute.String("gen_ai.operation.name", "chat"),
		attribute.String("gen_ai.provider.name", "openai"),
		attribute.String("gen_ai.request.model", req.Model),
		attribute.String("gen_ai.response.model", req.Model),
		attribute.Int("gen_ai.usage.input_tokens", req.InputTokens),
	}
}

// network is a client's one-way delay to the server.
func network(rng *rand.Rand) time.Duration {
	return time.Duration(1e6 + rng.Int64N(3e6)) // 1-4 ms
}

func emitChunks(tracer trace.Tracer, req *Request, arrival time.Time, rng *rand.Rand) Truth {
	span, tr, end := chunkSpan(context.Background(), tracer, ShapeChunks, req, arrival, rng)
	return finish(span, &tr, end)
}

// chunkSpan starts the chunk-event client span of a request, with its
// events, and returns it unended with its truth (no IDs yet) and end time.
// The request leaves the client its network delay and ClientDelay before
// it reaches the engine; tokens come back after the network delay.
func chunkSpan(ctx context.Context, tracer trace.Tracer, shape Shape, req *Request, arrival time.Time, rng *rand.Rand) (trace.Span, Truth, time.Time) {
	oneWay := network(rng)
	start := arrival.Add(-oneWay - Durations(req.ClientDelay))
	tr := Truth{Model: req.Model, Shape: shape, Layer: "client", Service: shape.Service(), StartUnixNano: start.UnixNano(), InputTokens: req.InputTokens}
	_, span := tracer.Start(ctx, "openai.chat", trace.WithSpanKind(trace.SpanKindClient), trace.WithTimestamp(start))
	span.SetAttributes(clientAttrs(req)...)
	span.SetAttributes(attribute.Bool("gen_ai.is_streaming", true))
	if req.Failed {
		tr.Error = true
		span.SetStatus(codes.Error, "503 Service Unavailable")
		span.SetAttributes(attribute.String("error.type", "503"))
		return span, tr, arrival.Add(Durations(req.Queue) + oneWay)
	}
	span.SetAttributes(attribute.Int("gen_ai.usage.output_tokens", req.OutputTokens))
	tr.OutputTokens = req.OutputTokens

	const event, count = "gen_ai.content.completion.chunk", "gen_ai.usage.output_tokens"
	recv := func(engineT float64) time.Time { return arrival.Add(Durations(engineT) + oneWay) }
	var outputs []time.Time
	first := recv(req.TTFT())
	if rng.IntN(2) == 0 {
		// The chat role chunk, just before the first token.
		span.AddEvent(event, trace.WithTimestamp(first.Add(-100*time.Microsecond)), trace.WithAttributes(attribute.Int(count, 0)))
	}
	for k := 0; k < req.OutputTokens; {
		size := 1
		if rng.Float64() < 0.2 {
			size = 2 + rng.IntN(3)
		}
		size = min(size, req.OutputTokens-k)
		k += size
		at := recv(req.TokenTimes[k-1])
		span.AddEvent(event, trace.WithTimestamp(at), trace.WithAttributes(attribute.Int(count, size)))
		outputs = append(outputs, at)
	}
	last := outputs[len(outputs)-1]
	span.AddEvent(event, trace.WithTimestamp(last.Add(500*time.Microsecond)), trace.WithAttributes(attribute.Int(count, 0)))

	ttft, e2e := sec(outputs[0].Sub(start)), sec(last.Sub(start))
	tr.TTFT, tr.E2E, tr.TPOT = ptr(ttft), ptr(e2e), tpot(ttft, e2e, req.OutputTokens)
	itl(&tr, outputs)
	clientParts(&tr, req)
	return span, tr, last.Add(time.Duration(1e6 + rng.Int64N(2e6)))
}

// itl sets the truth's gaps between outputs, their mean and maximum.
func itl(tr *Truth, outputs []time.Time) {
	if len(outputs) < 2 {
		return
	}
	maxGap := 0.0
	for i := 1; i < len(outputs); i++ {
		g := sec(outputs[i].Sub(outputs[i-1]))
		tr.ITLGaps = append(tr.ITLGaps, g)
		maxGap = max(maxGap, g)
	}
	tr.ITLMean = ptr(sec(outputs[len(outputs)-1].Sub(outputs[0])) / float64(len(outputs)-1))
	tr.ITLMax = ptr(maxGap)
}

func emitSemconv(tracer trace.Tracer, req *Request, arrival time.Time, rng *rand.Rand) Truth {
	oneWay := network(rng)
	delay := Durations(req.ClientDelay)
	start := arrival.Add(-oneWay - delay)
	tr := Truth{Model: req.Model, Shape: ShapeSemconv, Layer: "client", Service: ShapeSemconv.Service(), StartUnixNano: start.UnixNano(), InputTokens: req.InputTokens}
	_, span := tracer.Start(context.Background(), "chat "+req.Model, trace.WithSpanKind(trace.SpanKindClient), trace.WithTimestamp(start))
	span.SetAttributes(clientAttrs(req)...)
	span.SetAttributes(attribute.Bool("gen_ai.request.stream", true))
	if req.Failed {
		tr.Error = true
		span.SetStatus(codes.Error, "429 Too Many Requests")
		span.SetAttributes(attribute.String("error.type", "429"))
		return finish(span, &tr, arrival.Add(Durations(req.Queue)+oneWay))
	}
	ttfc := sec(Durations(req.TTFT()) + 2*oneWay + delay)
	end := start.Add(Durations(req.E2E()) + 2*oneWay + delay)
	span.SetAttributes(attribute.Float64("gen_ai.response.time_to_first_chunk", ttfc), attribute.Int("gen_ai.usage.output_tokens", req.OutputTokens))
	// The span ends at the last chunk: E2E is the span's duration.
	e2e := sec(end.Sub(start))
	tr.TTFT, tr.E2E, tr.OutputTokens, tr.TPOT = ptr(ttfc), ptr(e2e), req.OutputTokens, tpot(ttfc, e2e, req.OutputTokens)
	clientParts(&tr, req)
	return finish(span, &tr, end)
}
