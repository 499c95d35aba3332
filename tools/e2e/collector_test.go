// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

// Package e2e runs the built collector distribution (make dist) as a real
// process: spans go in over OTLP/gRPC, come out over OTLP/HTTP, and are
// checked against values computed here from the project's formulas.
package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmslo/llmslo/internal/contract"
	"github.com/llmslo/llmslo/internal/otlpio"
)

// collectorBinary finds the distribution; outside CI a missing binary skips.
func collectorBinary(t *testing.T) string {
	path := os.Getenv("LLMSLO_COLLECTOR")
	if path == "" {
		path = filepath.Join("..", "..", "dist", "otelcol-llmslo")
	}
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("collector binary %s missing: run make dist", path)
		}
		t.Skipf("collector binary %s missing: run make dist", path)
	}
	abs, err := filepath.Abs(path)
	require.NoError(t, err)
	return abs
}

func freePort(t *testing.T) int {
	portsMu.Lock()
	defer portsMu.Unlock()
	for {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		port := ln.Addr().(*net.TCPAddr).Port
		require.NoError(t, ln.Close())
		// The kernel may hand a closed port out again: two processes of
		// one test were once given the same one (Prometheus and a
		// collector's receiver), so no port is given twice.
		if !portsGiven[port] {
			portsGiven[port] = true
			return port
		}
	}
}

var (
	portsMu    sync.Mutex
	portsGiven = map[int]bool{}
)

// startCollector runs the binary on config (with %d placeholders filled) and
// stops it when the test ends; it returns the running command.
func startCollector(t *testing.T, config string) *exec.Cmd {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "config.yaml")
	require.NoError(t, os.WriteFile(cfgPath, []byte(config), 0o600))
	return startProcess(t, filepath.Join(dir, "collector.log"), collectorBinary(t), "--config", cfgPath)
}

// startProcess runs a server for the test's duration, its output in
// logPath (shown when the test fails), and stops it with SIGTERM (SIGKILL
// after 15 s) when the test ends.
func startProcess(t *testing.T, logPath, bin string, args ...string) *exec.Cmd {
	logFile, err := os.Create(logPath)
	require.NoError(t, err)
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() {
			_ = cmd.Wait()
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		_ = logFile.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("%s log:\n%s", filepath.Base(bin), b)
		}
	})
	return cmd
}

const t0 = 1_767_225_600_000_000_000

func at(ms float64) pcommon.Timestamp { return pcommon.Timestamp(t0 + int64(ms*1e6)) }

type spanSpec struct {
	name       string
	kind       ptrace.SpanKind
	start, end float64 // ms
	attrs      map[string]any
	events     []float64 // chunk event times, ms
	failed     bool
}

func buildTraces(specs []spanSpec) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "e2e")
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	for i, sp := range specs {
		s := spans.AppendEmpty()
		s.SetName(sp.name)
		s.SetKind(sp.kind)
		s.SetTraceID(pcommon.TraceID{1, byte(i)})
		s.SetSpanID(pcommon.SpanID{2, byte(i)})
		s.SetStartTimestamp(at(sp.start))
		s.SetEndTimestamp(at(sp.end))
		if err := s.Attributes().FromRaw(sp.attrs); err != nil {
			panic(err)
		}
		for _, e := range sp.events {
			ev := s.Events().AppendEmpty()
			ev.SetName("gen_ai.content.completion.chunk")
			ev.SetTimestamp(at(e))
		}
		if sp.failed {
			s.Status().SetCode(ptrace.StatusCodeError)
		}
	}
	return td
}

// expectation lists the attributes a span must come out with. Durations in
// seconds; verdicts as "met", "violated" or "unknown" with the violations.
type expectation struct {
	seconds    map[string]float64
	ints       map[string]int64
	strs       map[string]string
	absent     []string
	verdict    string
	violations []string
}

func TestProcessorEndToEnd(t *testing.T) {
	recv, err := otlpio.NewReceiver("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = recv.Close() })
	grpcPort := freePort(t)
	startCollector(t, fmt.Sprintf(`
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:%d
processors:
  llm_slo:
    slos:
      - name: interactive
        ttft: 500ms
        tpot: 15ms
        e2e: 2s
  batch:
    timeout: 100ms
exporters:
  otlp_http:
    endpoint: http://%s
    compression: none
service:
  pipelines:
    traces:
      receivers: [otlp]
      processors: [llm_slo, batch]
      exporters: [otlp_http]
  telemetry:
    metrics:
      level: none
`, grpcPort, recv.Addr()))

	// Each span's expected values, computed from the definitions:
	// TTFT = first output - start; E2E = last output - start (engine
	// attribute when present); TPOT = (E2E - TTFT)/(N - 1); ITL = gaps of
	// consecutive output events.
	specs := []spanSpec{
		{name: "llm_request", kind: ptrace.SpanKindServer, start: 0, end: 1200.5, attrs: map[string]any{
			"gen_ai.latency.time_to_first_token": 0.162, "gen_ai.latency.e2e": 1.2, "gen_ai.latency.time_in_queue": 0.012,
			"gen_ai.usage.completion_tokens": 128, "gen_ai.usage.prompt_tokens": 512}},
		{name: "openai.chat", kind: ptrace.SpanKindClient, start: 0, end: 205, attrs: map[string]any{
			"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o-mini",
			"gen_ai.is_streaming": true, "gen_ai.usage.output_tokens": 5, "gen_ai.usage.input_tokens": 20},
			events: []float64{100, 120, 140, 170, 200}},
		{name: "chat gpt-4o", kind: ptrace.SpanKindClient, start: 0, end: 1030, attrs: map[string]any{
			"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o",
			"gen_ai.request.stream": true, "gen_ai.server.time_to_first_token": 0.25, "gen_ai.server.time_per_output_token": 0.02,
			"gen_ai.usage.output_tokens": 40}},
		{name: "chat llama", kind: ptrace.SpanKindClient, start: 0, end: 1180, attrs: map[string]any{
			"gen_ai.operation.name": "chat", "gen_ai.provider.name": "vllm", "gen_ai.request.model": "llama",
			"gen_ai.request.stream": true, "gen_ai.response.time_to_first_chunk": 0.18, "gen_ai.usage.output_tokens": 101}},
		{name: "chat llama", kind: ptrace.SpanKindClient, start: 0, end: 900, attrs: map[string]any{
			"gen_ai.operation.name": "chat", "gen_ai.request.model": "llama", "gen_ai.usage.output_tokens": 30}},
		{name: "chat llama", kind: ptrace.SpanKindClient, start: 0, end: 30, failed: true, attrs: map[string]any{
			"gen_ai.operation.name": "chat", "gen_ai.request.model": "llama", "gen_ai.request.stream": true}},
		{name: "GET /healthz", kind: ptrace.SpanKindServer, start: 0, end: 2, attrs: map[string]any{"http.request.method": "GET"}},
	}
	want := []expectation{
		{seconds: map[string]float64{"llm.ttft": 0.162, "llm.e2e": 1.2, "llm.tpot": (1.2 - 0.162) / 127, "llm.queue_time": 0.012},
			ints: map[string]int64{"llm.output_tokens": 128, "llm.input_tokens": 512},
			strs: map[string]string{"llm.layer": "server", "llm.metrics.source": "vllm:attributes"}, verdict: "met"},
		{seconds: map[string]float64{"llm.ttft": 0.1, "llm.e2e": 0.2, "llm.tpot": 0.1 / 4, "llm.itl.mean": 0.025, "llm.itl.max": 0.03},
			ints:    map[string]int64{"llm.output_tokens": 5},
			strs:    map[string]string{"llm.layer": "client", "llm.metrics.source": "openllmetry:events", "llm.model": "gpt-4o-mini"},
			verdict: "violated", violations: []string{"tpot"}},
		// OpenLIT's time_per_output_token is a mean chunk gap: ITL, not TPOT.
		{seconds: map[string]float64{"llm.ttft": 0.25, "llm.e2e": 1.03, "llm.tpot": (1.03 - 0.25) / 39, "llm.itl.mean": 0.02},
			strs: map[string]string{"llm.metrics.source": "openlit:attributes,ttft=first_event"}, absent: []string{"llm.itl.max"},
			verdict: "violated", violations: []string{"tpot"}},
		{seconds: map[string]float64{"llm.ttft": 0.18, "llm.e2e": 1.18, "llm.tpot": 1.0 / 100},
			strs: map[string]string{"llm.metrics.source": "semconv:attributes"}, verdict: "met"},
		{seconds: map[string]float64{"llm.e2e": 0.9}, absent: []string{"llm.ttft", "llm.tpot"},
			strs: map[string]string{"llm.metrics.error": "ttft:not_emitted"}, verdict: "unknown", violations: []string{"ttft:unknown", "tpot:unknown"}},
		{seconds: map[string]float64{"llm.e2e": 0.03}, verdict: "violated", violations: []string{"error"}},
		{},
	}

	sender, err := otlpio.NewSender(fmt.Sprintf("127.0.0.1:%d", grpcPort))
	require.NoError(t, err)
	t.Cleanup(func() { _ = sender.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	require.NoError(t, sender.Send(ctx, buildTraces(specs)))
	require.NoError(t, recv.WaitSpans(ctx, len(specs)))
	time.Sleep(300 * time.Millisecond)
	require.Equal(t, len(specs), recv.SpanCount(), "no span lost or duplicated")

	got := map[pcommon.SpanID]ptrace.Span{}
	for _, td := range recv.Traces() {
		otlpio.Spans(td, func(_ ptrace.ResourceSpans, s ptrace.Span) { got[s.SpanID()] = s })
	}
	for i, w := range want {
		s, ok := got[pcommon.SpanID{2, byte(i)}]
		require.True(t, ok, "span %d missing", i)
		t.Run(fmt.Sprintf("%d_%s", i, specs[i].name), func(t *testing.T) {
			a := s.Attributes()
			if i == len(want)-1 {
				assert.Equal(t, len(specs[i].attrs), a.Len(), "a non-LLM span passes untouched")
				return
			}
			for k, v := range w.seconds {
				x, ok := a.Get(k)
				if assert.True(t, ok, k) {
					assert.InDelta(t, v, x.Double(), 1e-6, k)
				}
			}
			for k, v := range w.ints {
				x, ok := a.Get(k)
				if assert.True(t, ok, k) {
					assert.Equal(t, v, x.Int(), k)
				}
			}
			for k, v := range w.strs {
				x, ok := a.Get(k)
				if assert.True(t, ok, k) {
					assert.Equal(t, v, x.Str(), k)
				}
			}
			for _, k := range w.absent {
				_, ok := a.Get(k)
				assert.False(t, ok, k)
			}
			met, hasMet := a.Get("llm.slo.interactive.met")
			switch w.verdict {
			case "met":
				assert.True(t, hasMet && met.Bool())
			case "violated":
				assert.True(t, hasMet && !met.Bool())
			case "unknown":
				assert.False(t, hasMet)
			}
			viol, ok := a.Get("llm.slo.interactive.violations")
			if len(w.violations) == 0 {
				assert.False(t, ok)
			} else if assert.True(t, ok) {
				var names []string
				for _, v := range viol.Slice().All() {
					names = append(names, v.Str())
				}
				assert.Equal(t, w.violations, names)
			}
		})
	}
}

// TestTraceAssemblyEndToEnd: SGLang- and TGI-shaped traces through the built
// collector in trace-assembly mode, the request span arriving before its
// steps; the request span comes out with TTFT, ITL and E2E from its steps,
// and every gap reaches the connector's ITL histogram.
func TestTraceAssemblyEndToEnd(t *testing.T) {
	recv, err := otlpio.NewReceiver("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = recv.Close() })
	grpcPort := freePort(t)
	startCollector(t, fmt.Sprintf(`
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:%d
processors:
  llm_slo:
    trace_assembly:
      enabled: true
      wait: 5s
connectors:
  llm_slo:
    metrics_flush_interval: 1s
    collector_instance_id: false
exporters:
  otlp_http:
    endpoint: http://%s
    compression: none
service:
  pipelines:
    traces:
      receivers: [otlp]
      processors: [llm_slo]
      exporters: [otlp_http, llm_slo]
    metrics:
      receivers: [llm_slo]
      exporters: [otlp_http]
  telemetry:
    metrics:
      level: none
`, grpcPort, recv.Addr()))
	sender, err := otlpio.NewSender(fmt.Sprintf("127.0.0.1:%d", grpcPort))
	require.NoError(t, err)
	t.Cleanup(func() { _ = sender.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	total := 0
	for _, dir := range []string{"sglang_trace", "tgi_trace"} {
		td, err := golden.ReadTraces(filepath.Join("..", "..", "testdata", "traces", dir, "input.yaml"))
		require.NoError(t, err)
		total += td.SpanCount()
		// The request span first, in a batch of its own; its steps later.
		steps, rest := ptrace.NewTraces(), ptrace.NewTraces()
		td.CopyTo(steps)
		td.CopyTo(rest)
		isStep := func(s ptrace.Span) bool { return s.Name() == "decode_loop" || s.Name() == "send_generation" }
		steps.ResourceSpans().At(0).ScopeSpans().At(0).Spans().RemoveIf(func(s ptrace.Span) bool { return !isStep(s) })
		rest.ResourceSpans().At(0).ScopeSpans().At(0).Spans().RemoveIf(isStep)
		require.NoError(t, sender.Send(ctx, rest))
		time.Sleep(300 * time.Millisecond)
		require.NoError(t, sender.Send(ctx, steps))
	}
	require.NoError(t, recv.WaitSpans(ctx, total))

	spans := map[string]ptrace.Span{}
	for _, td := range recv.Traces() {
		otlpio.Spans(td, func(_ ptrace.ResourceSpans, s ptrace.Span) { spans[s.Name()] = s })
	}
	check := func(name string, want map[string]float64, gaps []float64) {
		s, ok := spans[name]
		require.True(t, ok, name)
		for k, v := range want {
			got, ok := s.Attributes().Get(k)
			if assert.True(t, ok, "%s %s", name, k) {
				assert.InDelta(t, v, got.Double(), 1e-6, "%s %s", name, k)
			}
		}
		g, ok := s.Attributes().Get("llm.itl.gaps")
		require.True(t, ok, name)
		got, ok := contract.GapsOf(g)
		require.True(t, ok, "%s: llm.itl.gaps is %s", name, g.Type())
		assert.InDeltaSlice(t, gaps, got, 1e-6, name)
	}
	// SGLang: engine TTFT and E2E; decode steps end at 260, 320, 390, 480,
	// 880 ms. TGI: steps start at 150, 200, 260, 330, 980 ms.
	check(" Req 1a2b3c4d", map[string]float64{"llm.ttft": 0.2, "llm.e2e": 0.9, "llm.itl.mean": 0.155, "llm.itl.max": 0.4},
		[]float64{0.06, 0.07, 0.09, 0.4})
	check("chat_completions", map[string]float64{"llm.ttft": 0.15, "llm.e2e": 0.98, "llm.tpot": 0.2075, "llm.itl.mean": 0.2075, "llm.itl.max": 0.65, "llm.queue_time": 0.0112},
		[]float64{0.05, 0.06, 0.07, 0.65})

	// The server-layer ITL histogram holds all eight gaps.
	require.Eventually(t, func() bool {
		ms := recv.Metrics()
		if len(ms) == 0 {
			return false
		}
		var count uint64
		for _, rm := range ms[len(ms)-1].ResourceMetrics().All() {
			for _, sm := range rm.ScopeMetrics().All() {
				for _, m := range sm.Metrics().All() {
					if m.Name() == "llm.server.inter_token_latency" {
						for _, dp := range m.ExponentialHistogram().DataPoints().All() {
							count += dp.Count()
						}
					}
				}
			}
		}
		return count == 8
	}, 20*time.Second, 200*time.Millisecond, "ITL histogram")
}
