// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package derive

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmslo/llmslo/internal/preset"
)

const t0 = 1_767_225_600_000_000_000 // 2026-01-01T00:00:00Z

func ms(x float64) pcommon.Timestamp { return pcommon.Timestamp(t0 + int64(math.Round(x*1e6))) }

type ev struct {
	name   string
	at     float64 // ms after t0
	tokens int64   // -1: no token-count attribute
}

func chunk(at float64, tokens int64) ev { return ev{"gen_ai.content.completion.chunk", at, tokens} }

func newSpan(name string, endMs float64, attrs map[string]any, events ...ev) ptrace.Span {
	s := ptrace.NewSpan()
	s.SetName(name)
	s.SetStartTimestamp(ms(0))
	s.SetEndTimestamp(ms(endMs))
	require.NoError(nil, s.Attributes().FromRaw(attrs))
	for _, e := range events {
		se := s.Events().AppendEmpty()
		se.SetName(e.name)
		se.SetTimestamp(ms(e.at))
		if e.tokens >= 0 {
			se.Attributes().PutInt("gen_ai.usage.output_tokens", e.tokens)
		}
	}
	return s
}

func derive(t *testing.T, opts Options, span ptrace.Span) Result {
	t.Helper()
	var res Result
	require.True(t, NewTable(preset.Builtin(), opts).Derive(span, &res), "span not recognized")
	return res
}

func k(v float64) Value { return Value{V: v, S: Known} }

var (
	na      = Value{S: NotApplicable}
	missing = Value{}
)

// TestReferenceVectors checks the worked vectors of the metric-definitions
// reference (§10), as span events, against the values the project's
// definitions give (DESIGN "Decisions": role and usage chunks are not output).
func TestReferenceVectors(t *testing.T) {
	client := map[string]any{"gen_ai.operation.name": "chat", "gen_ai.request.stream": true, "gen_ai.usage.output_tokens": 5}
	v1 := newSpan("chat m", 202, client,
		chunk(90, 0), chunk(100, 1), chunk(120, 1), chunk(140, 1), chunk(170, 1), chunk(200, 1), chunk(201, 0))
	v3 := newSpan("chat m", 152, client, chunk(100, 1), chunk(130, 3), chunk(150, 1))
	tests := []struct {
		name                             string
		span                             ptrace.Span
		tokenAware                       bool
		ttft, e2e, tpot, itlMean, itlMax float64
	}{
		// V1: TTFT 100, E2E 200, TPOT (200-100)/4 = 25, gaps [20,20,30,30].
		{"V1", v1, false, 0.100, 0.200, 0.025, 0.025, 0.030},
		{"V1 token-aware", v1, true, 0.100, 0.200, 0.025, 0.025, 0.030},
		// V3: TTFT 100, E2E 150, TPOT (150-100)/4 = 12.5; per chunk [30,20],
		// token-aware [10,10,10,20].
		{"V3 per chunk", v3, false, 0.100, 0.150, 0.0125, 0.025, 0.030},
		{"V3 token-aware", v3, true, 0.100, 0.150, 0.0125, 0.0125, 0.020},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := derive(t, Options{TokenAwareITL: tt.tokenAware}, tt.span)
			assert.InDelta(t, tt.ttft, r.TTFT.V, 1e-12)
			assert.InDelta(t, tt.e2e, r.E2E.V, 1e-12)
			assert.InDelta(t, tt.tpot, r.TPOT.V, 1e-12)
			assert.InDelta(t, tt.itlMean, r.ITLMean.V, 1e-12)
			assert.InDelta(t, tt.itlMax, r.ITLMax.V, 1e-12)
			assert.Equal(t, FromEvents, r.Origin)
			assert.True(t, r.Errors.Empty(), r.Errors.String())
		})
	}
}

// TestGapsMatchVectors: the gaps on the Result are the reference vectors'
// ITL (V3 per chunk; V1 without the role and usage chunks), and a span whose
// events lie outside it has none, as its ITL is not derived.
func TestGapsMatchVectors(t *testing.T) {
	client := map[string]any{"gen_ai.operation.name": "chat", "gen_ai.usage.output_tokens": 5}
	v3 := newSpan("chat m", 152, client, chunk(100, 1), chunk(130, 3), chunk(150, 1))
	assertSeconds(t, []float64{0.030, 0.020}, derive(t, Options{}, v3).Gaps)
	v1 := newSpan("chat m", 202, client,
		chunk(90, 0), chunk(100, 1), chunk(120, 1), chunk(140, 1), chunk(170, 1), chunk(200, 1), chunk(201, 0))
	assertSeconds(t, []float64{0.020, 0.020, 0.030, 0.030}, derive(t, Options{}, v1).Gaps)
	bad := newSpan("chat m", 100, client, chunk(50, 1), chunk(150, 1))
	assert.Empty(t, derive(t, Options{}, bad).Gaps)
}

// TestGapWeights: every gap is on the Result, and token-aware a chunk of k
// tokens is one entry gap/k of weight k (V3: 10 ms of weight 3, then 20 ms).
func TestGapWeights(t *testing.T) {
	client := map[string]any{"gen_ai.operation.name": "chat", "gen_ai.usage.output_tokens": 5}
	v3 := newSpan("chat m", 152, client, chunk(100, 1), chunk(130, 3), chunk(150, 1))
	r := derive(t, Options{}, v3)
	assertSeconds(t, []float64{0.030, 0.020}, r.Gaps)
	assert.Empty(t, r.GapWeights, "per chunk every weight is 1")
	r = derive(t, Options{TokenAwareITL: true}, v3)
	assertSeconds(t, []float64{0.010, 0.020}, r.Gaps)
	assert.Equal(t, []int64{3, 1}, r.GapWeights)
}

func assertSeconds(t *testing.T, want, got []float64) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		assert.InDelta(t, want[i], got[i], 1e-12, "gap %d", i)
	}
}

// TestPresets checks one typical span per producer against the formulas.
func TestPresets(t *testing.T) {
	tests := []struct {
		name                                    string
		span                                    ptrace.Span
		preset                                  string
		layer                                   string
		origin                                  Origin
		ttft, e2e, tpot, itlMean, itlMax, queue Value
		out                                     int64
		stream                                  Tri
		errs                                    string
	}{
		{
			name: "vllm engine attributes win over span timing",
			span: newSpan("llm_request", 1200.5, map[string]any{
				"gen_ai.latency.time_to_first_token": 0.162, "gen_ai.latency.e2e": 1.2, "gen_ai.latency.time_in_queue": 0.012,
				"gen_ai.latency.time_in_model_decode": 1.03, "gen_ai.usage.completion_tokens": 128, "gen_ai.usage.prompt_tokens": 512}),
			preset: "vllm", layer: "server", origin: FromAttributes,
			ttft: k(0.162), e2e: k(1.2), tpot: k((1.2 - 0.162) / 127), itlMean: missing, itlMax: missing, queue: k(0.012), out: 128,
		},
		{
			name: "vllm n=4 divides tokens per sequence",
			span: newSpan("llm_request", 1000, map[string]any{
				"gen_ai.latency.time_to_first_token": 0.1, "gen_ai.latency.e2e": 1.0, "gen_ai.usage.completion_tokens": 400, "gen_ai.request.n": 4}),
			preset: "vllm", layer: "server", origin: FromAttributes,
			ttft: k(0.1), e2e: k(1.0), tpot: k(0.9 / 99), itlMean: missing, itlMax: missing, out: 400,
		},
		{
			// One token per sequence: neither TPOT nor ITL applies, judged
			// per sequence (the summed count of 4 said ITL was missing).
			name: "vllm n=4 of one token each",
			span: newSpan("llm_request", 1000, map[string]any{
				"gen_ai.latency.time_to_first_token": 0.1, "gen_ai.latency.e2e": 1.0, "gen_ai.usage.completion_tokens": 4, "gen_ai.request.n": 4}),
			preset: "vllm", layer: "server", origin: FromAttributes,
			ttft: k(0.1), e2e: k(1.0), tpot: na, itlMean: na, itlMax: na, out: 4,
		},
		{
			name: "engine TTFT wins over chunk events, ITL still from events",
			span: newSpan("llm_request", 300, map[string]any{
				"gen_ai.latency.time_to_first_token": 0.05, "gen_ai.latency.e2e": 0.29, "gen_ai.usage.completion_tokens": 3},
				chunk(100, -1), chunk(150, -1), chunk(250, -1)),
			preset: "vllm", layer: "server", origin: FromAttributes,
			ttft: k(0.05), e2e: k(0.29), tpot: k(0.12), itlMean: k(0.075), itlMax: k(0.1), out: 3, stream: True,
		},
		{
			name: "sglang root span",
			span: newSpan(" Req 1a2b3c4d", 900, map[string]any{"rid": "1a2b3c4d", "gen_ai.latency.time_to_first_token": 0.2,
				"gen_ai.latency.e2e": 0.9, "gen_ai.usage.completion_tokens": 50}),
			preset: "sglang", layer: "server", origin: FromAttributes,
			ttft: k(0.2), e2e: k(0.9), tpot: k(0.7 / 49), itlMean: missing, itlMax: missing, out: 50,
		},
		{
			name: "openlit: TTFT attribute, mean chunk gap is ITL not TPOT",
			span: newSpan("chat gpt-4o", 1030, map[string]any{"gen_ai.operation.name": "chat", "gen_ai.request.stream": true,
				"gen_ai.server.time_to_first_token": 0.25, "gen_ai.server.time_per_output_token": 0.02, "gen_ai.usage.output_tokens": 40}),
			preset: "openlit", layer: "client", origin: FromAttributes,
			ttft: k(0.25), e2e: k(1.03), tpot: k(0.78 / 39), itlMean: k(0.02), itlMax: missing, out: 40, stream: True,
		},
		{
			name: "openlit non-streaming: its TTFT is the whole call and is ignored",
			span: newSpan("chat gpt-4o", 800, map[string]any{"gen_ai.operation.name": "chat", "gen_ai.request.stream": false,
				"gen_ai.server.time_to_first_token": 0.8, "gen_ai.server.time_per_output_token": 0.0, "gen_ai.usage.output_tokens": 40}),
			preset: "openlit", layer: "client", origin: FromSpan,
			ttft: na, e2e: k(0.8), tpot: na, itlMean: na, itlMax: na, out: 40, stream: False,
		},
		{
			name: "openinference first-token event",
			span: newSpan("ChatCompletion", 700, map[string]any{"openinference.span.kind": "LLM", "llm.token_count.completion": 21},
				ev{"First Token Stream Event", 300, -1}),
			preset: "openinference", layer: "client", origin: FromEvents,
			ttft: k(0.3), e2e: k(0.7), tpot: k(0.02), itlMean: missing, itlMax: missing, out: 21, stream: True,
		},
		{
			name: "semconv streaming client with time_to_first_chunk",
			span: newSpan("chat llama", 1180, map[string]any{"gen_ai.operation.name": "chat", "gen_ai.request.stream": true,
				"gen_ai.response.time_to_first_chunk": 0.18, "gen_ai.usage.output_tokens": 101}),
			preset: "semconv", layer: "client", origin: FromAttributes,
			ttft: k(0.18), e2e: k(1.18), tpot: k(0.01), itlMean: missing, itlMax: missing, out: 101, stream: True,
		},
		{
			name:   "semconv without stream flag or TTFT: TTFT unknown",
			span:   newSpan("chat llama", 900, map[string]any{"gen_ai.operation.name": "chat", "gen_ai.usage.output_tokens": 30}),
			preset: "semconv", layer: "client", origin: FromSpan,
			ttft: missing, e2e: k(0.9), tpot: missing, itlMean: missing, itlMax: missing, out: 30, errs: "ttft:not_emitted",
		},
		{
			name: "litellm string stream flag",
			span: newSpan("litellm_request", 2500, map[string]any{"gen_ai.request.model": "gpt-4o", "llm.is_streaming": "False",
				"gen_ai.usage.completion_tokens": 80}),
			preset: "litellm", layer: "client", origin: FromSpan,
			ttft: na, e2e: k(2.5), tpot: na, itlMean: na, itlMax: na, out: 80, stream: False,
		},
		{
			name: "langfuse absolute first-token time",
			span: newSpan("generation", 1250, map[string]any{"langfuse.observation.type": "generation",
				"langfuse.observation.completion_start_time": `"2026-01-01T00:00:00.250Z"`,
				"langfuse.observation.usage_details":         `{"input": 120, "output": 41}`}),
			preset: "langfuse", layer: "client", origin: FromAttributes,
			ttft: k(0.25), e2e: k(1.25), tpot: k(1.0 / 40), itlMean: missing, itlMax: missing, out: 41,
		},
		{
			name: "langfuse usage without an output count",
			span: newSpan("generation", 1250, map[string]any{"langfuse.observation.type": "generation",
				"langfuse.observation.completion_start_time": `"2026-01-01T00:00:00.250Z"`,
				"langfuse.observation.usage_details":         `{"input": 120}`}),
			preset: "langfuse", layer: "client", origin: FromAttributes,
			ttft: k(0.25), e2e: k(1.25), tpot: missing, itlMean: missing, itlMax: missing, errs: "output_tokens:not_emitted",
		},
		{
			name:   "no usage count: tokens summed from chunk counts",
			span:   newSpan("chat m", 100, map[string]any{"gen_ai.operation.name": "chat"}, chunk(40, 2), chunk(60, 2), chunk(90, 1)),
			preset: "openllmetry", layer: "client", origin: FromEvents,
			ttft: k(0.04), e2e: k(0.09), tpot: k(0.05 / 4), itlMean: k(0.025), itlMax: k(0.03), out: 5, stream: True,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := derive(t, Options{}, tt.span)
			assert.Equal(t, tt.preset, r.Preset)
			assert.Equal(t, tt.layer, r.Layer)
			assert.Equal(t, tt.origin, r.Origin)
			for _, c := range []struct {
				name      string
				want, got Value
			}{{"ttft", tt.ttft, r.TTFT}, {"e2e", tt.e2e, r.E2E}, {"tpot", tt.tpot, r.TPOT}, {"itl.mean", tt.itlMean, r.ITLMean}, {"itl.max", tt.itlMax, r.ITLMax}, {"queue", tt.queue, r.QueueTime}} {
				assert.Equal(t, c.want.S, c.got.S, c.name)
				assert.InDelta(t, c.want.V, c.got.V, 1e-9, c.name)
			}
			assert.Equal(t, tt.out, r.OutputTokens)
			assert.Equal(t, tt.stream, r.Stream)
			assert.Equal(t, tt.errs, r.Errors.String())
		})
	}
}

func TestNotRecognised(t *testing.T) {
	table := NewTable(preset.Builtin(), Options{})
	for _, s := range []ptrace.Span{
		newSpan("GET /", 1, map[string]any{"http.request.method": "GET"}),
		newSpan("embeddings x", 1, map[string]any{"gen_ai.operation.name": "embeddings", "gen_ai.usage.input_tokens": 3}),
		newSpan("invoke_agent a", 1, map[string]any{"gen_ai.operation.name": "invoke_agent", "gen_ai.latency.e2e": 1.0}),
		newSpan("decode_loop", 1, map[string]any{"decode_ct": 3}),
	} {
		var r Result
		assert.False(t, table.Derive(s, &r), s.Name())
	}
}

// TestNonLLMSpanAllocatesNothing pins the pass-through cost: a span no
// preset claims is read without a single allocation.
func TestNonLLMSpanAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	table := NewTable(preset.Builtin(), Options{})
	s := newSpan("GET /users", 1, map[string]any{"http.request.method": "GET", "url.path": "/users", "server.address": "x",
		"http.response.status_code": 200, "gen_ai.unrelated": "y", "llm.something": 1})
	s.Events().AppendEmpty().SetName("exception")
	var r Result
	table.Derive(s, &r)
	assert.Zero(t, testing.AllocsPerRun(100, func() { table.Derive(s, &r) }))
}

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in   string
		want float64
		ok   bool
	}{
		{"1.234567ms", 0.001234567, true},
		{"2.5s", 2.5, true},
		{"850µs", 0.00085, true},
		{"850μs", 0.00085, true},
		{"850us", 0.00085, true},
		{"12ns", 12e-9, true},
		{"1m2.5s", 62.5, true},
		{"1h0m0s", 3600, true},
		{`"3ms"`, 0.003, true},
		{"0ns", 0, true},
		{"", 0, false},
		{"-1s", 0, false},
		{"1.2.3s", 0, false},
		{"5", 0, false},
		{"5 parsecs", 0, false},
		{"ms", 0, false},
	}
	for _, tt := range tests {
		got, ok := ParseDuration(tt.in)
		assert.Equal(t, tt.ok, ok, tt.in)
		assert.InDelta(t, tt.want, got, 1e-15, tt.in)
	}
}

func TestBadValues(t *testing.T) {
	base := func(ttft any, tokens any) ptrace.Span {
		return newSpan("llm_request", 500, map[string]any{"gen_ai.latency.time_to_first_token": ttft, "gen_ai.latency.e2e": 0.5,
			"gen_ai.usage.completion_tokens": tokens})
	}
	tests := []struct {
		name string
		span ptrace.Span
		errs string
	}{
		{"negative", base(-0.1, 10), "ttft:invalid_value"},
		{"NaN", base(math.NaN(), 10), "ttft:invalid_value"},
		{"+Inf", base(math.Inf(1), 10), "ttft:invalid_value"},
		{"beyond a week", base(1e9, 10), "ttft:out_of_range"},
		{"string number is read", base("0.1", "10"), ""},
		{"unparseable string", base("soon", 10), "ttft:invalid_value"},
		{"bool", base(true, 10), "ttft:invalid_type"},
		{"fractional tokens", base(0.1, 2.5), "output_tokens:invalid_value"},
		{"absurd tokens", base(0.1, int64(1)<<40), "output_tokens:out_of_range"},
		{"negative tokens", base(0.1, -1), "output_tokens:invalid_value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := derive(t, Options{}, tt.span)
			assert.Equal(t, tt.errs, r.Errors.String())
			if tt.errs == "" {
				assert.Equal(t, Known, r.TTFT.S)
				assert.Equal(t, Known, r.TPOT.S)
			} else {
				assert.NotEqual(t, Known, r.TPOT.S)
			}
		})
	}
}

// TestDroppedEvents: when the producer's SDK dropped events (the oldest go
// first), TTFT is not taken from the events that are left.
func TestDroppedEvents(t *testing.T) {
	s := newSpan("openai.chat", 300, map[string]any{"gen_ai.operation.name": "chat", "gen_ai.usage.output_tokens": 200},
		chunk(150, 1), chunk(200, 1), chunk(290, 1))
	s.SetDroppedEventsCount(197)
	r := derive(t, Options{}, s)
	assert.Equal(t, Missing, r.TTFT.S)
	assert.Equal(t, Missing, r.TPOT.S)
	assert.InDelta(t, 0.29, r.E2E.V, 1e-12, "the newest events are kept")
	assert.InDelta(t, 0.09, r.ITLMax.V, 1e-12)
	assert.Equal(t, "events:dropped", r.Errors.String())
}

// fakeSteps is a StepSource that records what it was asked.
type fakeSteps struct {
	calls  int
	tokens int64
	steps  *Steps
}

func (f *fakeSteps) Steps(_ ptrace.Span, _ *preset.Preset, n int64, _ bool) *Steps {
	f.calls++
	f.tokens = n
	return f.steps
}

// TestStepSource: for a preset with step spans, Derive asks the source
// once, with the span's own token count, and derives from the steps it
// returns; other presets never ask.
func TestStepSource(t *testing.T) {
	src := &fakeSteps{steps: &Steps{Times: []uint64{uint64(ms(300)), uint64(ms(360)), uint64(ms(390))}, Counts: []int64{-1, -1, -1}}}
	table := NewTable(preset.Builtin(), Options{Steps: src})
	var res Result
	sglang := newSpan(" Req 5eed5eed", 400, map[string]any{"rid": "5eed", "gen_ai.latency.time_to_first_token": 0.2,
		"gen_ai.latency.e2e": 0.39, "gen_ai.usage.completion_tokens": 4})
	require.True(t, table.Derive(sglang, &res))
	assert.Equal(t, 1, src.calls)
	assert.Equal(t, int64(4), src.tokens)
	assert.True(t, res.Assembled)
	assertSeconds(t, []float64{0.06, 0.03}, res.Gaps)
	require.True(t, table.Derive(newSpan("llm_request", 400, map[string]any{"gen_ai.latency.e2e": 0.39}), &res))
	assert.Equal(t, 1, src.calls, "vllm has no step spans")
	assert.False(t, res.Assembled)
}
