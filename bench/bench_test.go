// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

// Package bench measures the llm_slo processor against the irreducible
// work of writing its attributes, and the llm_slo connector against
// contrib's spanmetricsconnector, on the same spans. It is a separate module
// so that the benchmark-only dependencies stay out of the components' own.
package bench

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/connector/spanmetricsconnector"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"

	llmsloprocessor "github.com/llmslo/llmslo"
	"github.com/llmslo/llmslo/internal/benchspans"
	"github.com/llmslo/llmslo/llmsloconnector"
)

const t0 = benchspans.T0

// shape is one kind of input batch.
type shape struct {
	name   string
	spans  int // spans per batch
	events int // chunk events per span; -1: an engine span without events
	llm    bool
	models int // distinct model names in the batch
}

var shapes = []shape{
	{name: "vllm_attributes", spans: 1000, events: -1, llm: true, models: 3},
	{name: "chunks_16", spans: 1000, events: 16, llm: true, models: 3},
	{name: "chunks_256", spans: 100, events: 256, llm: true, models: 3},
	{name: "chunks_4096", spans: 10, events: 4096, llm: true, models: 3},
	{name: "non_llm", spans: 1000, llm: false},
}

// batch builds the input of a shape: spans as the producers write them.
func batch(s shape) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "bench")
	rs.Resource().Attributes().PutStr("host.name", "node-1")
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	spans.EnsureCapacity(s.spans)
	for i := range s.spans {
		sp := spans.AppendEmpty()
		sp.SetTraceID(pcommon.TraceID{byte(i), byte(i >> 8), 1})
		sp.SetSpanID(pcommon.SpanID{byte(i), byte(i >> 8), 2})
		sp.SetStartTimestamp(t0)
		a := sp.Attributes()
		model := fmt.Sprintf("model-%d", i%max(s.models, 1))
		switch {
		case !s.llm:
			sp.SetName("GET /api/users/{id}")
			sp.SetKind(ptrace.SpanKindServer)
			sp.SetEndTimestamp(t0 + 3e6)
			a.PutStr("http.request.method", "GET")
			a.PutStr("http.route", "/api/users/{id}")
			a.PutStr("url.path", "/api/users/42")
			a.PutStr("url.scheme", "https")
			a.PutInt("http.response.status_code", 200)
			a.PutStr("server.address", "api.example.com")
			a.PutInt("server.port", 443)
			a.PutStr("network.protocol.version", "1.1")
			a.PutStr("client.address", "10.0.0.1")
			a.PutStr("user_agent.original", "curl/8.5.0")
		case s.events < 0:
			benchspans.Engine(sp, fmt.Sprintf("cmpl-%d", i), model)
		default:
			benchspans.Client(sp, model, s.events)
		}
	}
	return td
}

func processorConfig() *llmsloprocessor.Config {
	cfg := llmsloprocessor.NewFactory().CreateDefaultConfig().(*llmsloprocessor.Config)
	ttft, tpot, e2e := 500*time.Millisecond, 15*time.Millisecond, 2*time.Second
	cfg.SLOs = []llmsloprocessor.SLOConfig{{Name: "interactive", TTFT: &ttft, TPOT: &tpot, E2E: &e2e}}
	return cfg
}

func newProcessor(tb testing.TB) processor.Traces {
	p, err := llmsloprocessor.NewFactory().CreateTraces(context.Background(),
		processortest.NewNopSettings(component.MustNewType("llm_slo")), processorConfig(), consumertest.NewNop())
	require.NoError(tb, err)
	return p
}

// processed is a batch after the processor: the connectors' input.
func processed(tb testing.TB, s shape) ptrace.Traces {
	td := batch(s)
	require.NoError(tb, newProcessor(tb).ConsumeTraces(context.Background(), td))
	return td
}

// added lists the attributes the processor adds to a span of the shape, as
// the bare pass must write the same number and kinds.
func added(tb testing.TB, s shape) []pcommon.Value {
	before := batch(shape{name: s.name, spans: 1, events: s.events, llm: s.llm, models: 1})
	after := ptrace.NewTraces()
	before.CopyTo(after)
	require.NoError(tb, newProcessor(tb).ConsumeTraces(context.Background(), after))
	b := before.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes()
	var out []pcommon.Value
	for k, v := range after.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes().All() {
		if _, ok := b.Get(k); !ok {
			out = append(out, v)
		}
	}
	return out
}

// bareKeys are what the processor reads on each shape.
var bareKeys = []string{
	"gen_ai.operation.name", "gen_ai.latency.time_to_first_token", "gen_ai.latency.e2e", "gen_ai.latency.time_in_queue",
	"gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens", "gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens",
	"gen_ai.request.n", "gen_ai.is_streaming", "gen_ai.response.model",
}

// barePass reads every field the processor needs and writes the same number
// and kinds of attributes with constant values: the irreducible work. The
// i-th span of td gets writes[i%len(writes)].
func barePass(td ptrace.Traces, writes [][]pcommon.Value, keys []string) {
	var sink float64
	i := 0
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				sink += bareRead(sp)
				bareWrite(sp.Attributes(), writes[i%len(writes)], keys)
				i++
			}
		}
	}
	_ = sink
}

// bareRead reads what the processor reads of a span.
func bareRead(sp ptrace.Span) float64 {
	var sink float64
	a := sp.Attributes()
	for _, k := range bareKeys {
		if v, ok := a.Get(k); ok && v.Type() == pcommon.ValueTypeDouble {
			sink += v.Double()
		}
	}
	sink += float64(sp.EndTimestamp() - sp.StartTimestamp())
	for _, ev := range sp.Events().All() {
		if ev.Name() == "gen_ai.content.completion.chunk" {
			if v, ok := ev.Attributes().Get("gen_ai.usage.output_tokens"); ok {
				sink += float64(v.Int())
			}
			sink += float64(ev.Timestamp())
		}
	}
	return sink
}

// bareWrite writes constants of the kinds of writes under keys.
func bareWrite(a pcommon.Map, writes []pcommon.Value, keys []string) {
	if len(writes) == 0 {
		return
	}
	a.EnsureCapacity(a.Len() + len(writes))
	for i, w := range writes {
		switch w.Type() {
		case pcommon.ValueTypeDouble:
			a.PutDouble(keys[i], 0.5)
		case pcommon.ValueTypeInt:
			a.PutInt(keys[i], 7)
		case pcommon.ValueTypeBool:
			a.PutBool(keys[i], true)
		case pcommon.ValueTypeBytes:
			// Packed gaps and weights: the same number of bytes.
			a.PutEmptyBytes(keys[i]).FromRaw(constantBytes[:w.Bytes().Len()])
		case pcommon.ValueTypeSlice:
			// Elements of the kinds the processor writes: doubles for
			// gaps, ints for weights, strings for violations.
			sl := a.PutEmptySlice(keys[i])
			sl.EnsureCapacity(w.Slice().Len())
			for _, e := range w.Slice().All() {
				putConstant(sl.AppendEmpty(), e.Type())
			}
		default:
			a.PutStr(keys[i], "constant")
		}
	}
}

// constantBytes is the source of packed writes; FromRaw copies it, as it
// copies the processor's scratch buffer.
var constantBytes = make([]byte, 1<<16)

// putConstant sets v to a constant of type t.
func putConstant(v pcommon.Value, t pcommon.ValueType) {
	switch t {
	case pcommon.ValueTypeDouble:
		v.SetDouble(0.5)
	case pcommon.ValueTypeInt:
		v.SetInt(7)
	default:
		v.SetStr("tpot")
	}
}

func perSpan(b *testing.B, spans int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*spans), "ns/span")
}

// BenchmarkProcessor: each iteration copies the batch (the processor
// mutates it) and processes the copy. The copy-only arm measures the copy,
// so that report ratios compare (arm - copy) with (arm - copy).
func BenchmarkProcessor(b *testing.B) {
	for _, s := range shapes {
		src := batch(s)
		writes := added(b, s)
		keys := make([]string, len(writes))
		for i := range keys {
			keys[i] = fmt.Sprintf("llm.bench.%d", i)
		}
		p := newProcessor(b)
		dst := ptrace.NewTraces()
		b.Run(s.name+"/copy_only", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				dst = ptrace.NewTraces()
				src.CopyTo(dst)
			}
			perSpan(b, s.spans)
		})
		b.Run(s.name+"/bare_pass", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				dst = ptrace.NewTraces()
				src.CopyTo(dst)
				barePass(dst, [][]pcommon.Value{writes}, keys)
			}
			perSpan(b, s.spans)
		})
		b.Run(s.name+"/processor", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				dst = ptrace.NewTraces()
				src.CopyTo(dst)
				if err := p.ConsumeTraces(context.Background(), dst); err != nil {
					b.Fatal(err)
				}
			}
			perSpan(b, s.spans)
		})
	}
}

func llmConnector(tb testing.TB, edits ...func(*llmsloconnector.Config)) connector.Traces {
	f := llmsloconnector.NewFactory()
	cfg := f.CreateDefaultConfig().(*llmsloconnector.Config)
	cfg.MetricsFlushInterval = time.Hour
	cfg.AggregationCardinalityLimit = 0
	for _, edit := range edits {
		edit(cfg)
	}
	c, err := f.CreateTracesToMetrics(context.Background(), connectortest.NewNopSettings(component.MustNewType("llm_slo")), cfg, consumertest.NewNop())
	require.NoError(tb, err)
	require.NoError(tb, c.Start(context.Background(), nil))
	tb.Cleanup(func() { _ = c.Shutdown(context.Background()) })
	return c
}

// spanmetricsConfig is pinned: exponential histogram (default max size
// 160), no exemplars, cumulative, the same dimensions as the llm_slo
// connector (model, provider, operation, layer; service.name is in both
// defaults), a flush interval that does not fire during the benchmark.
const spanmetricsConfig = `
histogram:
  exponential:
    max_size: 160
exemplars:
  enabled: false
aggregation_temporality: AGGREGATION_TEMPORALITY_CUMULATIVE
metrics_flush_interval: 1h
dimensions:
  - name: llm.model
  - name: gen_ai.provider.name
  - name: gen_ai.operation.name
  - name: llm.layer
`

func spanmetrics(tb testing.TB) connector.Traces {
	f := spanmetricsconnector.NewFactory()
	cfg := f.CreateDefaultConfig()
	cm, err := confmap.NewRetrievedFromYAML([]byte(spanmetricsConfig))
	require.NoError(tb, err)
	conf, err := cm.AsConf()
	require.NoError(tb, err)
	require.NoError(tb, conf.Unmarshal(cfg))
	c, err := f.CreateTracesToMetrics(context.Background(), connectortest.NewNopSettings(f.Type()), cfg, consumertest.NewNop())
	require.NoError(tb, err)
	require.NoError(tb, c.Start(context.Background(), nil))
	tb.Cleanup(func() { _ = c.Shutdown(context.Background()) })
	return c
}

// BenchmarkConnector: both connectors on the same processed spans.
func BenchmarkConnector(b *testing.B) {
	for _, s := range shapes {
		if !s.llm {
			continue
		}
		td := processed(b, s)
		for _, arm := range []struct {
			name string
			c    connector.Traces
		}{{"spanmetrics", spanmetrics(b)}, {"llmslo", llmConnector(b)}} {
			b.Run(s.name+"/"+arm.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if err := arm.c.ConsumeTraces(context.Background(), td); err != nil {
						b.Fatal(err)
					}
				}
				perSpan(b, s.spans)
			})
		}
	}
}

// BenchmarkConnectorOptions: the llm_slo connector as by default, with an
// OTEP 235 tracestate (10% sampling) on every span, and with exemplars on,
// in one run.
func BenchmarkConnectorOptions(b *testing.B) {
	for _, s := range shapes[:2] {
		td := processed(b, s)
		// sampled: one tracestate for the batch (a sampler's threshold);
		// withRV: each span's own, as when the randomness is explicit.
		sampled, withRV := ptrace.NewTraces(), ptrace.NewTraces()
		td.CopyTo(sampled)
		td.CopyTo(withRV)
		spans, rvSpans := sampled.ResourceSpans().At(0).ScopeSpans().At(0).Spans(), withRV.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
		for i := 0; i < spans.Len(); i++ {
			spans.At(i).TraceState().FromRaw("ot=th:e666666666666a")
			rvSpans.At(i).TraceState().FromRaw(fmt.Sprintf("ot=th:e666666666666a;rv:%014x", 0xf0000000000000+i))
		}
		exemplars := func(c *llmsloconnector.Config) { c.Exemplars.Enabled = true }
		for _, arm := range []struct {
			name string
			c    connector.Traces
			td   ptrace.Traces
		}{
			{"default", llmConnector(b), td},
			{"tracestate", llmConnector(b), sampled},
			{"tracestate_rv", llmConnector(b), withRV},
			{"exemplars", llmConnector(b, exemplars), td},
		} {
			b.Run(s.name+"/"+arm.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if err := arm.c.ConsumeTraces(context.Background(), arm.td); err != nil {
						b.Fatal(err)
					}
				}
				perSpan(b, s.spans)
			})
		}
	}
}

// BenchmarkTotal: processor + connector on fresh copies, against the copy.
func BenchmarkTotal(b *testing.B) {
	for _, s := range shapes[:2] {
		src := batch(s)
		p, c := newProcessor(b), llmConnector(b)
		b.Run(s.name+"/processor+connector", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				dst := ptrace.NewTraces()
				src.CopyTo(dst)
				if err := p.ConsumeTraces(context.Background(), dst); err != nil {
					b.Fatal(err)
				}
				if err := c.ConsumeTraces(context.Background(), dst); err != nil {
					b.Fatal(err)
				}
			}
			perSpan(b, s.spans)
		})
	}
}

// BenchmarkConnectorSeries: cost per span as live series grow.
func BenchmarkConnectorSeries(b *testing.B) {
	for _, models := range []int{1, 100, 10000} {
		td := processed(b, shape{name: "series", spans: 1000, events: -1, llm: true, models: models})
		for _, arm := range []struct {
			name string
			c    connector.Traces
		}{{"spanmetrics", spanmetrics(b)}, {"llmslo", llmConnector(b)}} {
			b.Run(fmt.Sprintf("series_%d/%s", models, arm.name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if err := arm.c.ConsumeTraces(context.Background(), td); err != nil {
						b.Fatal(err)
					}
				}
				perSpan(b, 1000)
			})
		}
	}
}

// TestNonLLMSpansAllocateNothing: the processor adds no allocation to a
// batch of spans that are not LLM requests.
func TestNonLLMSpansAllocateNothing(t *testing.T) {
	td := batch(shapes[4])
	p := newProcessor(t)
	require.NoError(t, p.ConsumeTraces(context.Background(), td))
	// processorhelper itself allocates a few objects per batch (its
	// telemetry); the batch of 1,000 spans must not add one per span.
	allocs := testing.AllocsPerRun(50, func() { _ = p.ConsumeTraces(context.Background(), td) })
	require.Less(t, allocs, 10.0, "allocations per 1,000-span batch")
}

// sglangTraces is n SGLang-shaped traces (request root, a thread span, six
// slices including five decode_loop steps), each with its own trace ID.
func sglangTraces(n int) ptrace.Traces {
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	for i := range n {
		id := pcommon.TraceID{byte(i), byte(i >> 8), 7}
		root := spans.AppendEmpty()
		root.SetName(" Req 1a2b3c4d")
		root.SetTraceID(id)
		root.SetStartTimestamp(t0)
		root.SetEndTimestamp(t0 + 900e6)
		a := root.Attributes()
		a.PutStr("rid", "1a2b3c4d5e6f")
		a.PutStr("gen_ai.response.model", "llama")
		a.PutInt("gen_ai.usage.prompt_tokens", 100)
		a.PutInt("gen_ai.usage.completion_tokens", 6)
		a.PutDouble("gen_ai.latency.time_to_first_token", 0.2)
		a.PutDouble("gen_ai.latency.e2e", 0.9)
		for _, name := range []string{"Scheduler [TP 0]", "request_process", "prefill_forward"} {
			s := spans.AppendEmpty()
			s.SetName(name)
			s.SetTraceID(id)
			s.SetStartTimestamp(t0)
			s.SetEndTimestamp(t0 + 200e6)
		}
		for k, end := range []int64{260, 320, 390, 480, 880} {
			s := spans.AppendEmpty()
			s.SetName("decode_loop")
			s.SetTraceID(id)
			s.SetStartTimestamp(t0)
			s.SetEndTimestamp(pcommon.Timestamp(t0 + end*1e6))
			s.Attributes().PutInt("decode_ct", int64(k+1))
		}
	}
	return td
}

// BenchmarkAssembly: the added cost per span of trace assembly on
// SGLang-shaped traces (steps and request in one batch), against the same
// processor without it.
func BenchmarkAssembly(b *testing.B) {
	src := sglangTraces(100)
	for _, on := range []bool{false, true} {
		cfg := processorConfig()
		cfg.TraceAssembly.Enabled = on
		p, err := llmsloprocessor.NewFactory().CreateTraces(context.Background(),
			processortest.NewNopSettings(component.MustNewType("llm_slo")), cfg, consumertest.NewNop())
		require.NoError(b, err)
		b.Run(fmt.Sprintf("sglang/assembly=%v", on), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				dst := ptrace.NewTraces()
				src.CopyTo(dst)
				if err := p.ConsumeTraces(context.Background(), dst); err != nil {
					b.Fatal(err)
				}
			}
			perSpan(b, src.SpanCount())
		})
	}
}
