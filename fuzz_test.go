// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloprocessor

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/llmslo/llmslo/internal/contract"
	"github.com/llmslo/llmslo/internal/metadata"
)

// fuzzKeys are the attribute keys the presets read, plus a few others and
// the processor's own keys (a second tier sees them).
var fuzzKeys = []string{
	"gen_ai.operation.name", "gen_ai.latency.time_to_first_token", "gen_ai.latency.e2e", "gen_ai.latency.time_in_queue",
	"gen_ai.latency.kv_cache_transfer_time", "gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens",
	"gen_ai.usage.input_tokens", "gen_ai.request.n", "gen_ai.request.stream", "llm.is_streaming",
	"gen_ai.response.time_to_first_chunk", "gen_ai.server.time_to_first_token", "gen_ai.server.time_per_output_token",
	"openinference.span.kind", "langfuse.observation.type", "langfuse.observation.completion_start_time",
	"gen_ai.request.model", "rid", "llm.request.type", "http.method", "llm.ttft", "llm.slo.interactive.met", "llm.metrics.source",
	"langfuse.observation.usage_details", "llm.slo.forged.met", "llm.itl.gap_weights", "gen_ai.response.model",
	"gen_ai.latency.time_in_model_prefill", "gen_ai.latency.time_in_model_decode", "llm.network_time", "llm.slo.interactive.causes",
}

var fuzzNames = []string{"llm_request", " Req 1a2b3c4d", "openai.chat", "chat m", "litellm_request", "ChatCompletion", "GET /", ""}

var fuzzEvents = []string{"gen_ai.content.completion.chunk", "llm.content.completion.chunk", "First Token Stream Event", "exception"}

var fuzzStrings = []string{"chat", "embeddings", "LLM", "generation", "True", "false", "0.25", "NaN", "-1", "1e400", "", "1.5ms",
	`"2026-01-01T00:00:00.250Z"`, "text_completion", "x", `{"input": 3, "output": 40}`, `{"output": -1}`, `{"output": "7"}`,
	`{"output": 1e99}`, `{"output": {}}`, `[1,2]`, "m\xff\xfe", `{"output": 16777216}`}

// fuzzReader turns fuzz bytes into choices; it returns zeros when exhausted.
type fuzzReader struct{ b []byte }

func (r *fuzzReader) byte() byte {
	if len(r.b) == 0 {
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *fuzzReader) u64() uint64 {
	var buf [8]byte
	for i := range buf {
		buf[i] = r.byte()
	}
	return binary.LittleEndian.Uint64(buf[:])
}

func (r *fuzzReader) pick(n int) int { return int(r.byte()) % n }

func (r *fuzzReader) value(v pcommon.Value) {
	switch r.pick(7) {
	case 5:
		// The bounds and just beyond: token counts, week-long durations, 2^63.
		v.SetInt([]int64{1 << 24, 1<<24 + 1, 1 << 40, 7 * 24 * 3600, math.MaxInt64}[r.pick(5)])
	case 0:
		v.SetDouble(math.Float64frombits(r.u64()))
	case 1:
		v.SetDouble(float64(r.byte()) / 100)
	case 2:
		v.SetInt(int64(r.u64()))
	case 3:
		v.SetInt(int64(r.byte()))
	case 4:
		v.SetStr(fuzzStrings[r.pick(len(fuzzStrings))])
	default:
		v.SetBool(r.byte()%2 == 0)
	}
}

func fuzzTraces(data []byte) ptrace.Traces {
	r := &fuzzReader{b: data}
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	for n := 1 + r.pick(4); n > 0; n-- {
		s := spans.AppendEmpty()
		s.SetName(fuzzNames[r.pick(len(fuzzNames))])
		// Parent links among the batch's spans (self, cycles, pairs): the
		// wrapper pairing reads them.
		s.SetSpanID(pcommon.SpanID{byte(spans.Len())})
		if p := r.pick(6); p > 0 {
			s.SetParentSpanID(pcommon.SpanID{byte(p)})
		}
		start := uint64(1_767_225_600_000_000_000) + uint64(r.byte())*1e6
		if r.pick(8) == 0 {
			start = r.u64()
		}
		s.SetStartTimestamp(pcommon.Timestamp(start))
		end := start + uint64(r.byte())*1e7 - uint64(r.pick(2))*1e8
		if r.pick(16) == 0 {
			end = start + uint64(r.byte())*86400e9 // up to 255 days
		}
		s.SetEndTimestamp(pcommon.Timestamp(end))
		if r.pick(4) == 0 {
			s.Status().SetCode(ptrace.StatusCodeError)
		}
		for a := r.pick(10); a > 0; a-- {
			r.value(s.Attributes().PutEmpty(fuzzKeys[r.pick(len(fuzzKeys))]))
		}
		for e := r.pick(12); e > 0; e-- {
			ev := s.Events().AppendEmpty()
			ev.SetName(fuzzEvents[r.pick(len(fuzzEvents))])
			ev.SetTimestamp(pcommon.Timestamp(start + uint64(r.byte())*1e6 - uint64(r.pick(2))*5e7))
			if r.pick(2) == 0 {
				r.value(ev.Attributes().PutEmpty("gen_ai.usage.output_tokens"))
			}
		}
	}
	return td
}

// FuzzProcessor feeds arbitrary spans, attributes and events through the
// processor and checks its guarantees: it never panics or fails a batch,
// never drops a span, and changes nothing but its own attributes.
func FuzzProcessor(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("llm_request with a few attributes and events"))
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30})
	f.Add([]byte{3, 2, 9, 5, 1, 0, 9, 7, 4, 2, 1, 3, 200, 4, 2, 3, 1, 0, 80, 1, 0, 2, 100, 0, 0, 3, 120, 1})
	f.Add([]byte{1, 0, 0, 0, 9, 1, 1, 100, 2, 1, 50, 5, 3, 30, 0, 1, 9, 0, 40, 0, 1, 0, 60, 1, 0, 200})
	cfg, err := loadConfigF(f, "golden")
	require.NoError(f, err)
	sink := new(consumertest.TracesSink)
	p, err := NewFactory().CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, sink)
	require.NoError(f, err)
	keys := contract.NewKeys(cfg.AttributePrefix)
	f.Fuzz(func(t *testing.T, data []byte) {
		in := fuzzTraces(data)
		before := ptrace.NewTraces()
		in.CopyTo(before)
		sink.Reset()
		require.NoError(t, p.ConsumeTraces(context.Background(), in))
		require.Len(t, sink.AllTraces(), 1)
		out := sink.AllTraces()[0]
		require.Equal(t, before.SpanCount(), out.SpanCount())
		bs := before.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
		os := out.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
		for i := 0; i < bs.Len(); i++ {
			b, o := bs.At(i), os.At(i)
			require.Equal(t, b.Name(), o.Name())
			require.Equal(t, b.StartTimestamp(), o.StartTimestamp())
			require.Equal(t, b.EndTimestamp(), o.EndTimestamp())
			require.True(t, b.Events().Len() == o.Events().Len())
			for j := 0; j < b.Events().Len(); j++ {
				require.Equal(t, b.Events().At(j).Timestamp(), o.Events().At(j).Timestamp())
				be, oe := b.Events().At(j).Attributes(), o.Events().At(j).Attributes()
				require.Equal(t, be.Len(), oe.Len())
				for k, v := range be.All() {
					got, ok := oe.Get(k)
					require.True(t, ok && sameValue(v, got), "event attribute %q changed", k)
				}
			}
			for k, v := range b.Attributes().All() {
				if isOwnKey(keys, k) {
					continue
				}
				got, ok := o.Attributes().Get(k)
				require.True(t, ok, "attribute %q dropped", k)
				require.True(t, sameValue(v, got), "attribute %q changed", k)
			}
			for k := range o.Attributes().All() {
				if _, ok := b.Attributes().Get(k); !ok {
					require.True(t, isOwnKey(keys, k), "unexpected attribute %q added", k)
				}
			}
			_, forged := o.Attributes().Get("llm.slo.forged.met")
			require.False(t, forged, "a key of the namespace that the processor did not write survived")
			checkPartsAndCauses(t, keys, o.Attributes())
			if m, ok := o.Attributes().Get(keys.Model); ok {
				require.True(t, utf8.ValidString(m.Str()), "model %q is not UTF-8", m.Str())
			}
		}
	})
}

func isOwnKey(k contract.Keys, key string) bool { return k.Owns(key) }

// checkPartsAndCauses: every part written is a duration within the bounds
// (never negative), and every causes entry is of the closed vocabulary.
func checkPartsAndCauses(t *testing.T, keys contract.Keys, attrs pcommon.Map) {
	for _, key := range []string{keys.QueueTime, keys.PrefillTime, keys.KVTransferTime, keys.DecodeTime, keys.NetworkTime} {
		if v, ok := attrs.Get(key); ok {
			require.Equal(t, pcommon.ValueTypeDouble, v.Type(), key)
			require.True(t, v.Double() >= 0 && v.Double() <= contract.MaxSeconds, "%s = %v", key, v.Double())
		}
	}
	if v, ok := attrs.Get(keys.SLOCauses("interactive")); ok {
		for _, e := range v.Slice().All() {
			_, _, valid := contract.ParseCauseEntry(e.Str())
			require.True(t, valid, "cause %q", e.Str())
		}
	}
}

// sameValue is Value.Equal, except that a NaN equals itself bit for bit.
func sameValue(a, b pcommon.Value) bool {
	if a.Type() == pcommon.ValueTypeDouble && b.Type() == pcommon.ValueTypeDouble {
		return math.Float64bits(a.Double()) == math.Float64bits(b.Double())
	}
	return a.Equal(b)
}

// FuzzAssembly sends arbitrary trace shapes (request spans of the producers
// with step spans, steps without requests, requests without steps, spans of
// a few traces interleaved across batches) through the trace assembly, into
// a consumer that marks its data read-only, as a fan-out does, and answers
// each call as the input says: accept, refuse retryable (the sender sends
// the batch again, a few times at most) or refuse permanently. The clock
// moves and the wait timer runs between batches. Checked: nothing panics,
// every span of an acknowledged batch comes out exactly once, after
// shutdown at the latest, or is counted as given up; no span of a batch
// that was never acknowledged comes out.
func FuzzAssembly(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
	f.Add([]byte{1, 0, 3, 0, 3, 1, 3, 2, 255, 1, 0, 2, 4, 1, 4, 2, 4, 3})
	f.Add([]byte("sglang and tgi steps in odd orders"))
	f.Add([]byte{3, 1, 2, 9, 9, 4, 0, 0, 1, 1, 1, 2, 200, 3, 2, 2, 7, 5, 1, 0, 3, 2, 1, 9, 2, 0, 0, 5})
	cfg, err := loadConfigF(f, "assembly")
	require.NoError(f, err)
	cfg.TraceAssembly.MaxTraces = 4
	cfg.TraceAssembly.MaxSteps = 16
	cfg.TraceAssembly.MaxStepsPerTrace = 5
	cfg.TraceAssembly.MaxHeldPerTrace = 2
	cfg.TraceAssembly.MaxHeld = 5
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &fuzzReader{b: data}
		next := &fuzzRefuser{r: r, got: map[pcommon.SpanID]int{}}
		tel := componenttest.NewTelemetry()
		defer func() { require.NoError(t, tel.Shutdown(context.Background())) }()
		set := processortest.NewNopSettings(metadata.Type)
		set.TelemetrySettings = tel.NewTelemetrySettings()
		impl, err := newProcessor(set, cfg, next)
		require.NoError(t, err)
		now := time.Unix(1_767_225_600, 0)
		impl.asm.SetClock(func() time.Time { return now })
		p, err := newTracesFromImpl(context.Background(), set, cfg, next, impl)
		require.NoError(t, err)
		acknowledged, ids := 0, uint16(0)
		for len(r.b) > 0 {
			td := fuzzAssemblyBatch(r, &ids)
			acknowledged += sendRetrying(p, td)
			checkCounters(t, impl.asm)
			now = now.Add(time.Duration(r.byte()) * 100 * time.Millisecond)
			_ = impl.asm.Tick(context.Background())
			checkCounters(t, impl.asm)
		}
		next.r = &fuzzReader{} // the input is spent: accept from here on
		_ = p.Shutdown(context.Background())
		for id, n := range next.got {
			require.Equal(t, 1, n, "span %v delivered %d times", id, n)
		}
		require.Equal(t, acknowledged, len(next.got)+int(givenUp(tel)))
	})
}

// fuzzRefuser marks what it is given read-only and answers as the input
// says: mostly accept, refuse retryable or permanently. It counts the spans
// it accepted by span ID.
type fuzzRefuser struct {
	r   *fuzzReader
	got map[pcommon.SpanID]int
}

func (*fuzzRefuser) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (c *fuzzRefuser) ConsumeTraces(_ context.Context, td ptrace.Traces) error {
	td.MarkReadOnly()
	switch c.r.pick(5) {
	case 1:
		return errors.New("503")
	case 2:
		return consumererror.NewPermanent(errors.New("400"))
	}
	eachSpan(td, func(s ptrace.Span) { c.got[s.SpanID()]++ })
	return nil
}

// sendRetrying sends td as a sender does: again, from its own copy, after
// a retryable refusal (three tries at most), never after a permanent one.
// It returns the spans acknowledged.
func sendRetrying(p processor.Traces, td ptrace.Traces) int {
	for range 3 {
		try := ptrace.NewTraces()
		td.CopyTo(try)
		err := p.ConsumeTraces(context.Background(), try)
		if err == nil {
			return td.SpanCount()
		}
		if consumererror.IsPermanent(err) {
			return 0
		}
	}
	return 0
}

var fuzzAssemblyNames = []string{" Req 1a2b3c4d", "chat_completions", "decode_loop", "send_generation", "other"}

// fuzzAssemblyBatch builds a batch of up to five spans of six traces, each
// with a span ID of its own.
func fuzzAssemblyBatch(r *fuzzReader, ids *uint16) ptrace.Traces {
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	for n := r.pick(6); n > 0; n-- {
		s := spans.AppendEmpty()
		kind := r.pick(len(fuzzAssemblyNames))
		s.SetName(fuzzAssemblyNames[kind])
		s.SetTraceID(pcommon.TraceID{r.byte() % 6})
		*ids++
		s.SetSpanID(pcommon.SpanID{1, byte(*ids >> 8), byte(*ids)})
		start := uint64(1_767_225_600_000_000_000) + uint64(r.byte())*1e6
		s.SetStartTimestamp(pcommon.Timestamp(start))
		s.SetEndTimestamp(pcommon.Timestamp(start + uint64(r.byte())*1e7))
		switch kind {
		case 0:
			s.Attributes().PutStr("rid", "x")
			s.Attributes().PutInt("gen_ai.usage.completion_tokens", int64(r.byte()%8))
			r.value(s.Attributes().PutEmpty("gen_ai.latency.time_to_first_token"))
		case 1:
			r.value(s.Attributes().PutEmpty("total_time"))
			s.Attributes().PutStr("queue_time", fuzzStrings[r.pick(len(fuzzStrings))])
		case 2:
			r.value(s.Attributes().PutEmpty("decode_ct"))
		case 3:
			s.Attributes().PutStr("generation", fmt.Sprintf(fuzzGenerations[r.pick(len(fuzzGenerations))], r.byte()%8))
		}
	}
	return td
}

// fuzzGenerations are TGI generation texts (%d: a token id or count): a
// step, a step of several tokens, a last step, a forged field in a text.
var fuzzGenerations = []string{
	`Generation { request_id: 0, prefill_tokens: None, tokens: Some(Tokens { ids: [%d], logprobs: [], texts: [], is_special: [] }), generated_text: None, top_tokens: [] }`,
	`Generation { request_id: 0, prefill_tokens: None, tokens: Some(Tokens { ids: [1, 2, %d], logprobs: [], texts: [], is_special: [] }), generated_text: None, top_tokens: [] }`,
	`Generation { request_id: 0, prefill_tokens: None, tokens: Some(Tokens { ids: [1], logprobs: [], texts: [], is_special: [] }), generated_text: Some(GeneratedText { text: "x", generated_tokens: %d, finish_reason: Length, seed: None }), top_tokens: [] }`,
	`Generation { tokens: Some(Tokens { ids: [1], texts: ["generated_text: Some(GeneratedText { generated_tokens: %d"] }) }`,
}

// givenUp is the number of held spans the assembly counted as given up
// after a refusal.
func givenUp(tel *componenttest.Telemetry) int64 {
	m, err := tel.GetMetric("otelcol_processor_llm_slo_assembly_evictions")
	if err != nil {
		return 0 // nothing counted
	}
	n := int64(0)
	for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
		switch v, _ := dp.Attributes.Value("reason"); v.AsString() {
		case "refused_downstream", "retry_full", "refused_at_shutdown":
			n += dp.Value
		}
	}
	return n
}
