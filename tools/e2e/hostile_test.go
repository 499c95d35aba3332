// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmslo/llmslo/internal/otlpio"
)

// hostileSpan is one span of the hostile batch and what must come out.
type hostileSpan struct {
	name    string
	build   func(spans ptrace.SpanSlice, id byte)
	errText string // a reason llm.metrics.error must hold; "" for none
	llm     bool   // an LLM request the SLO counts
}

const maxTokens = 1 << 24 // the processor's bound on a token count

func hostileSpans() []hostileSpan {
	return []hostileSpan{
		{name: "neighbour", llm: true, build: func(spans ptrace.SpanSlice, id byte) {
			s := newHostile(spans, id, "llm_request", 0, 1.2e9)
			_ = s.Attributes().FromRaw(map[string]any{"gen_ai.latency.time_to_first_token": 0.162, "gen_ai.latency.e2e": 1.2,
				"gen_ai.usage.completion_tokens": 128, "gen_ai.response.model": "llama"})
		}},
		{name: "20 chunks of 2^24 tokens", llm: true, errText: "output_tokens:out_of_range", build: func(spans ptrace.SpanSlice, id byte) {
			s := newHostile(spans, id, "openai.chat", 0, 3e9)
			s.SetKind(ptrace.SpanKindClient)
			s.Attributes().PutStr("gen_ai.operation.name", "chat")
			for i := range 20 {
				e := s.Events().AppendEmpty()
				e.SetName("gen_ai.content.completion.chunk")
				e.SetTimestamp(pcommon.Timestamp(t0 + int64(i+1)*100_000_000))
				e.Attributes().PutInt("gen_ai.usage.output_tokens", maxTokens)
			}
		}},
		{name: "thirty-day span", llm: true, errText: "e2e:out_of_range", build: func(spans ptrace.SpanSlice, id byte) {
			s := newHostile(spans, id, "chat m", 0, 30*86400*1e9)
			s.SetKind(ptrace.SpanKindClient)
			_ = s.Attributes().FromRaw(map[string]any{"gen_ai.operation.name": "chat", "gen_ai.request.stream": false})
		}},
		{name: "start beyond int64", llm: true, errText: "span:out_of_range", build: func(spans ptrace.SpanSlice, id byte) {
			s := newHostile(spans, id, "generation", 0, 1e9)
			s.SetStartTimestamp(1 << 63)
			s.SetEndTimestamp(1<<63 + 1e9)
			_ = s.Attributes().FromRaw(map[string]any{"langfuse.observation.type": "generation",
				"langfuse.observation.completion_start_time": 9.3e18, "langfuse.observation.usage_details": `{"output": 4}`})
		}},
		{name: "invalid UTF-8 model", llm: true, errText: "model:invalid_utf8", build: func(spans ptrace.SpanSlice, id byte) {
			s := newHostile(spans, id, "llm_request", 0, 1e9)
			_ = s.Attributes().FromRaw(map[string]any{"gen_ai.latency.time_to_first_token": 0.1, "gen_ai.latency.e2e": 1.0,
				"gen_ai.usage.completion_tokens": 10, "gen_ai.response.model": "llama\xff\xfe-3"})
		}},
		// A counter past the request's count never completes it: the
		// request is let go at wait with its own values, no gap made.
		{name: "decode_ct jump of 2^40", llm: true, errText: "assembly:incomplete", build: func(spans ptrace.SpanSlice, id byte) {
			s := newHostile(spans, id, " Req b0b0b0b0", 0, 1e9)
			_ = s.Attributes().FromRaw(map[string]any{"rid": "b0", "gen_ai.latency.time_to_first_token": 0.1,
				"gen_ai.latency.e2e": 0.9, "gen_ai.usage.completion_tokens": 3})
			for i, ct := range []int64{1, 1 + 1<<40, 2 + 1<<40} {
				step := newHostile(spans, id, "decode_loop", 1e8, float64(i+2)*1e8)
				step.SetSpanID(pcommon.SpanID{3, id, byte(i)})
				step.Attributes().PutInt("decode_ct", ct)
			}
		}},
		{name: "forged verdicts on a plain span", build: func(spans ptrace.SpanSlice, id byte) {
			s := newHostile(spans, id, "GET /api/users", 0, 3e6)
			_ = s.Attributes().FromRaw(map[string]any{"http.request.method": "GET", "llm.metrics.source": "vllm:attributes",
				"llm.layer": "server", "llm.model": "forged", "llm.slo.interactive.met": true, "llm.slo.forged.met": true,
				"llm.slo.forged.violations": []any{"ttft"}, "llm.ttft": 0.001})
		}},
	}
}

// newHostile appends a span of trace {0xb0, id} starting startNs after t0.
func newHostile(spans ptrace.SpanSlice, id byte, name string, startNs, endNs float64) ptrace.Span {
	s := spans.AppendEmpty()
	s.SetName(name)
	s.SetKind(ptrace.SpanKindServer)
	s.SetTraceID(pcommon.TraceID{0xb0, id})
	s.SetSpanID(pcommon.SpanID{2, id})
	s.SetStartTimestamp(pcommon.Timestamp(t0 + int64(startNs)))
	s.SetEndTimestamp(pcommon.Timestamp(t0 + int64(endNs)))
	return s
}

// TestHostileSpansEndToEnd sends the span bombs of the processor's tests
// (token counts, step counters, timestamps and model names out of range)
// and a plain span carrying forged llm.* keys, with an ordinary neighbour,
// through the built collector in its most exposed mode (token-aware ITL and
// trace assembly). Every span must come out, each bomb with its reason in
// llm.metrics.error, the forged span stripped of every llm.* key and counted
// in no metric, and the collector's peak RSS bounded.
func TestHostileSpansEndToEnd(t *testing.T) {
	recv, err := otlpio.NewReceiver("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = recv.Close() })
	grpcPort := freePort(t)
	cmd := startCollector(t, fmt.Sprintf(`
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:%d
processors:
  llm_slo:
    token_aware_itl: true
    trace_assembly:
      enabled: true
      wait: 1s
    slos:
      - name: interactive
        ttft: 500ms
        e2e: 2s
  batch:
    timeout: 100ms
connectors:
  llm_slo:
    metrics_flush_interval: 1s
exporters:
  otlp_http:
    endpoint: http://%s
    compression: none
service:
  pipelines:
    traces:
      receivers: [otlp]
      processors: [llm_slo, batch]
      exporters: [otlp_http, llm_slo]
    metrics:
      receivers: [llm_slo]
      exporters: [otlp_http]
  telemetry:
    metrics:
      level: none
`, grpcPort, recv.Addr()))

	cases := hostileSpans()
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	for i, c := range cases {
		c.build(spans, byte(i))
	}
	sent := td.SpanCount()
	sender, err := otlpio.NewSender(fmt.Sprintf("127.0.0.1:%d", grpcPort))
	require.NoError(t, err)
	t.Cleanup(func() { _ = sender.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	require.NoError(t, sender.Send(ctx, td))
	require.NoError(t, recv.WaitSpans(ctx, sent))
	time.Sleep(2 * time.Second) // two flushes of the connector
	require.Equal(t, sent, recv.SpanCount(), "every span comes out, once")

	got := map[pcommon.SpanID]ptrace.Span{}
	for _, out := range recv.Traces() {
		otlpio.Spans(out, func(_ ptrace.ResourceSpans, s ptrace.Span) { got[s.SpanID()] = s })
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, ok := got[pcommon.SpanID{2, byte(i)}]
			require.True(t, ok)
			a := s.Attributes()
			if !c.llm {
				for k := range a.All() {
					assert.False(t, strings.HasPrefix(k, "llm."), "forged key %s survived", k)
				}
				return
			}
			_, ok = a.Get("llm.metrics.source")
			assert.True(t, ok, "derived")
			if c.errText != "" {
				e, _ := a.Get("llm.metrics.error")
				assert.Contains(t, e.Str(), c.errText)
			}
		})
	}
	got0 := got[pcommon.SpanID{2, 0}].Attributes()
	ttft, _ := got0.Get("llm.ttft")
	assert.InDelta(t, 0.162, ttft.Double(), 1e-9, "the neighbour's TTFT")

	requests, names := sloCounts(recv.Metrics())
	assert.Equal(t, []string{"interactive"}, names, "only the configured SLO has series")
	llm := 0
	for _, c := range cases {
		if c.llm {
			llm++
		}
	}
	assert.Equal(t, float64(llm), requests, "llm.slo.requests counts the LLM spans, not the forged one")

	hwm := peakRSSMiB(t, cmd.Process.Pid)
	t.Logf("collector peak RSS %.1f MiB", hwm)
	assert.Less(t, hwm, 256.0, "peak RSS")
}

// sloCounts returns the latest llm.slo.requests total over every series and
// the SLO names any metric point carries.
func sloCounts(batches []pmetric.Metrics) (float64, []string) {
	latest := map[string]float64{} // series identity -> last cumulative value
	names := map[string]bool{}
	for _, md := range batches {
		rms := md.ResourceMetrics()
		for i := range rms.Len() {
			sms := rms.At(i).ScopeMetrics()
			for j := range sms.Len() {
				ms := sms.At(j).Metrics()
				for k := range ms.Len() {
					m := ms.At(k)
					if m.Type() != pmetric.MetricTypeSum {
						continue
					}
					dps := m.Sum().DataPoints()
					for d := range dps.Len() {
						dp := dps.At(d)
						if n, ok := dp.Attributes().Get("llm.slo.name"); ok {
							names[n.Str()] = true
						}
						if m.Name() == "llm.slo.requests" {
							latest[fmt.Sprint(dp.Attributes().AsRaw())] = float64(dp.IntValue()) + dp.DoubleValue()
						}
					}
				}
			}
		}
	}
	total := 0.0
	for _, v := range latest {
		total += v
	}
	var out []string
	for n := range names {
		out = append(out, n)
	}
	return total, out
}

// peakRSSMiB reads a process's high-water resident set (VmHWM).
func peakRSSMiB(t *testing.T, pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			require.NoError(t, err)
			return kb / 1024
		}
	}
	t.Fatal("no VmHWM in /proc/<pid>/status")
	return 0
}
