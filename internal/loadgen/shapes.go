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
)

// Shapes lists every shape.
var Shapes = []Shape{ShapeVLLM, ShapeChunks, ShapeSemconv}

// Layer returns the shape's llm.layer.
func (s Shape) Layer() string {
	if s == ShapeVLLM {
		return "server"
	}
	return "client"
}

// Service is the service.name of the shape's producer.
func (s Shape) Service() string {
	switch s {
	case ShapeVLLM:
		return "vllm"
	case ShapeChunks:
		return "chat-app"
	default:
		return "gateway"
	}
}

// Truth is the ground truth of one request, computed with the project's
// formulas from the timings written on its span. Durations in seconds; a
// nil pointer is a value the span does not give.
type Truth struct {
	TraceID       string    `json:"trace_id"`
	SpanID        string    `json:"span_id"`
	Model         string    `json:"model"`
	Shape         Shape     `json:"shape"`
	Layer         string    `json:"layer"`
	Error         bool      `json:"error"`
	TTFT          *float64  `json:"ttft,omitempty"`
	TPOT          *float64  `json:"tpot,omitempty"`
	E2E           *float64  `json:"e2e,omitempty"`
	ITLMean       *float64  `json:"itl_mean,omitempty"`
	ITLMax        *float64  `json:"itl_max,omitempty"`
	ITLGaps       []float64 `json:"itl_gaps,omitempty"`
	QueueTime     *float64  `json:"queue_time,omitempty"`
	OutputTokens  int       `json:"output_tokens,omitempty"`
	InputTokens   int       `json:"input_tokens,omitempty"`
	StartUnixNano int64     `json:"start_unix_nano"`
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
func Emit(tracer trace.Tracer, shape Shape, req *Request, arrival time.Time, rng *rand.Rand, modelAttr bool) Truth {
	switch shape {
	case ShapeVLLM:
		return emitVLLM(tracer, req, arrival, modelAttr)
	case ShapeChunks:
		return emitChunks(tracer, req, arrival, rng)
	default:
		return emitSemconv(tracer, req, arrival, rng)
	}
}

func finish(span trace.Span, tr *Truth, end time.Time) Truth {
	sc := span.SpanContext()
	tr.TraceID, tr.SpanID = sc.TraceID().String(), sc.SpanID().String()
	span.End(trace.WithTimestamp(end))
	return *tr
}

func emitVLLM(tracer trace.Tracer, req *Request, arrival time.Time, modelAttr bool) Truth {
	tr := Truth{Model: req.Model, Shape: ShapeVLLM, Layer: "server", StartUnixNano: arrival.UnixNano()}
	_, span := tracer.Start(context.Background(), "llm_request", trace.WithSpanKind(trace.SpanKindServer), trace.WithTimestamp(arrival))
	attrs := []attribute.KeyValue{
		attribute.String("gen_ai.request.id", fmt.Sprintf("cmpl-%x", arrival.UnixNano())),
		attribute.Int("gen_ai.request.max_tokens", 1024),
		attribute.Int("gen_ai.usage.prompt_tokens", req.InputTokens),
		attribute.Float64("gen_ai.latency.time_in_queue", req.Queue),
	}
	if modelAttr {
		attrs = append(attrs, attribute.String("gen_ai.response.model", req.Model))
	}
	tr.QueueTime, tr.InputTokens = ptr(req.Queue), req.InputTokens
	if req.Failed {
		tr.Error = true
		span.SetAttributes(attrs...)
		span.SetStatus(codes.Error, "engine error")
		return finish(span, &tr, arrival.Add(Durations(req.Queue+0.01)))
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
	// vLLM ends the span when its output processor handles the final
	// output, a little after the last token.
	return finish(span, &tr, arrival.Add(Durations(e2e+0.0002)))
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
	oneWay := network(rng)
	start := arrival.Add(-oneWay)
	tr := Truth{Model: req.Model, Shape: ShapeChunks, Layer: "client", StartUnixNano: start.UnixNano(), InputTokens: req.InputTokens}
	_, span := tracer.Start(context.Background(), "openai.chat", trace.WithSpanKind(trace.SpanKindClient), trace.WithTimestamp(start))
	span.SetAttributes(clientAttrs(req)...)
	span.SetAttributes(attribute.Bool("gen_ai.is_streaming", true))
	if req.Failed {
		tr.Error = true
		span.SetStatus(codes.Error, "503 Service Unavailable")
		span.SetAttributes(attribute.String("error.type", "503"))
		return finish(span, &tr, arrival.Add(Durations(req.Queue)+oneWay))
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
	if len(outputs) > 1 {
		maxGap := 0.0
		for i := 1; i < len(outputs); i++ {
			g := sec(outputs[i].Sub(outputs[i-1]))
			tr.ITLGaps = append(tr.ITLGaps, g)
			maxGap = max(maxGap, g)
		}
		tr.ITLMean = ptr(sec(last.Sub(outputs[0])) / float64(len(outputs)-1))
		tr.ITLMax = ptr(maxGap)
	}
	return finish(span, &tr, last.Add(time.Duration(1e6+rng.Int64N(2e6))))
}

func emitSemconv(tracer trace.Tracer, req *Request, arrival time.Time, rng *rand.Rand) Truth {
	oneWay := network(rng)
	start := arrival.Add(-oneWay)
	tr := Truth{Model: req.Model, Shape: ShapeSemconv, Layer: "client", StartUnixNano: start.UnixNano(), InputTokens: req.InputTokens}
	_, span := tracer.Start(context.Background(), "chat "+req.Model, trace.WithSpanKind(trace.SpanKindClient), trace.WithTimestamp(start))
	span.SetAttributes(clientAttrs(req)...)
	span.SetAttributes(attribute.Bool("gen_ai.request.stream", true))
	if req.Failed {
		tr.Error = true
		span.SetStatus(codes.Error, "429 Too Many Requests")
		span.SetAttributes(attribute.String("error.type", "429"))
		return finish(span, &tr, arrival.Add(Durations(req.Queue)+oneWay))
	}
	ttfc := sec(Durations(req.TTFT()) + 2*oneWay)
	end := start.Add(Durations(req.E2E()) + 2*oneWay)
	span.SetAttributes(attribute.Float64("gen_ai.response.time_to_first_chunk", ttfc), attribute.Int("gen_ai.usage.output_tokens", req.OutputTokens))
	// The span ends at the last chunk: E2E is the span's duration.
	e2e := sec(end.Sub(start))
	tr.TTFT, tr.E2E, tr.OutputTokens, tr.TPOT = ptr(ttfc), ptr(e2e), req.OutputTokens, tpot(ttfc, e2e, req.OutputTokens)
	return finish(span, &tr, end)
}
