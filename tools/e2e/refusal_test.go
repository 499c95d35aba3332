// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/llmslo/llmslo/internal/otlpio"
)

// refusingBackend is the traces backend of the refusal tests: an OTLP/HTTP
// endpoint that answers every request with status `refuse` (0: accepts and
// keeps the spans) or, down, does not listen at all.
type refusingBackend struct {
	addr string

	mu       sync.Mutex
	refuse   int
	srv      *http.Server
	got      map[pcommon.SpanID]int
	refusals int
}

func newRefusingBackend(t *testing.T) *refusingBackend {
	b := &refusingBackend{addr: fmt.Sprintf("127.0.0.1:%d", freePort(t)), got: map[pcommon.SpanID]int{}}
	t.Cleanup(b.down)
	return b
}

func (b *refusingBackend) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	er := ptraceotlp.NewExportRequest()
	if err == nil {
		err = er.UnmarshalProto(body)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case err != nil:
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	case b.refuse != 0:
		b.refusals++
		http.Error(w, http.StatusText(b.refuse), b.refuse)
		return
	}
	otlpio.Spans(er.Traces(), func(_ ptrace.ResourceSpans, s ptrace.Span) { b.got[s.SpanID()]++ })
	w.Header().Set("Content-Type", "application/x-protobuf")
	out, _ := ptraceotlp.NewExportResponse().MarshalProto()
	_, _ = w.Write(out)
}

// answer makes the backend answer status (0: accept), listening.
func (b *refusingBackend) answer(t *testing.T, code int) {
	b.mu.Lock()
	b.refuse = code
	up := b.srv != nil
	b.mu.Unlock()
	if up {
		return
	}
	ln, err := net.Listen("tcp", b.addr)
	require.NoError(t, err)
	srv := &http.Server{Handler: b, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	b.mu.Lock()
	b.srv = srv
	b.mu.Unlock()
}

// down closes the listener: the exporter's connections are refused.
func (b *refusingBackend) down() {
	b.mu.Lock()
	srv := b.srv
	b.srv = nil
	b.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
	}
}

// delivered returns how many times each span arrived, and the refusals.
func (b *refusingBackend) delivered() (map[pcommon.SpanID]int, int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make(map[pcommon.SpanID]int, len(b.got))
	for id, n := range b.got {
		out[id] = n
	}
	return out, b.refusals
}

// retryingSender sends as an OTLP exporter with a retry policy does: again
// after Unavailable (every 100 ms), never after another refusal. Any other
// failure (EOF, a reset or closed connection) is the test's failure.
type retryingSender struct {
	client  ptraceotlp.GRPCClient
	retries atomic.Int64
}

// send returns whether the collector acknowledged td, and the code of the
// refusal otherwise.
func (s *retryingSender) send(ctx context.Context, td ptrace.Traces) (bool, codes.Code, error) {
	for {
		_, err := s.client.Export(ctx, ptraceotlp.NewExportRequestFromTraces(td))
		st, _ := status.FromError(err)
		switch {
		case err == nil:
			return true, codes.OK, nil
		case st.Code() != codes.Unavailable:
			return false, st.Code(), nil
		case brokenConnection.MatchString(st.Message()):
			return false, st.Code(), fmt.Errorf("connection broken: %w", err)
		}
		s.retries.Add(1)
		select {
		case <-ctx.Done():
			return false, st.Code(), fmt.Errorf("%w (last error: %w)", ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// brokenConnection matches what a sender sees when the collector dies or
// drops the connection mid-request, as opposed to a refusal it answered.
var brokenConnection = regexp.MustCompile(`EOF|transport is closing|connection reset|error reading from server`)

// refusalGroups are the request spans of a scenario, by how the assembly
// releases them. Every request span waits for 4 decode steps.
type refusalGroups struct {
	inRequest ptrace.Traces // request spans only; their steps come later
	steps     ptrace.Traces // the steps of inRequest
	timer     ptrace.Traces // request spans only; no steps ever come
	mixed     ptrace.Traces // request spans with a span no preset claims
}

// newRefusalGroups builds n traces per group; group g's trace IDs start
// with g and its span IDs are unique across the scenario.
func newRefusalGroups(n int, first byte) refusalGroups {
	return refusalGroups{
		inRequest: refusalBatch(first, n, true, false, false),
		steps:     refusalBatch(first, n, false, true, false),
		timer:     refusalBatch(first+1, n, true, false, false),
		mixed:     refusalBatch(first+2, n, true, false, true),
	}
}

func refusalBatch(group byte, n int, requests, steps, other bool) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "sglang")
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	add := func(i int, kind byte, name string, start, end float64) ptrace.Span {
		s := spans.AppendEmpty()
		s.SetName(name)
		s.SetTraceID(pcommon.TraceID{group, byte(i)})
		s.SetSpanID(pcommon.SpanID{group, byte(i), kind})
		s.SetStartTimestamp(at(start))
		s.SetEndTimestamp(at(end))
		return s
	}
	for i := range n {
		if requests {
			s := add(i, 0xa0, " Req 1a2b3c4d", 0, 900)
			s.Attributes().PutStr("rid", fmt.Sprintf("r%d-%d", group, i))
			s.Attributes().PutInt("gen_ai.usage.completion_tokens", 5)
			s.Attributes().PutDouble("gen_ai.latency.time_to_first_token", 0.2)
		}
		for k := range 4 {
			if steps {
				add(i, byte(k), "decode_loop", 200+float64(k)*100, 260+float64(k)*100)
			}
		}
		if other {
			add(i, 0xf0, "GET /health", 0, 1)
		}
	}
	return td
}

// collectorEvictions scrapes the collector's own metrics: the trace
// assembly's give-ups and held spans, by reason.
func collectorEvictions(t *testing.T, url string) map[string]float64 {
	resp, err := http.Get(url) //nolint:noctx // a test's scrape
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	out := map[string]float64{}
	line := regexp.MustCompile(`^otelcol_processor_llm_slo_assembly_(evictions|held)[a-z_]*\{?(.*?)\}? ([0-9.e+]+)$`)
	reason := regexp.MustCompile(`reason="([^"]+)"`)
	for _, l := range strings.Split(string(body), "\n") {
		m := line.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		key := m[1]
		if r := reason.FindStringSubmatch(m[2]); r != nil {
			key = r[1]
		}
		v, err := strconv.ParseFloat(m[3], 64)
		require.NoError(t, err)
		out[key] += v
	}
	return out
}

const refusalConfig = `
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:%d
processors:
  llm_slo:
    trace_assembly:
      enabled: true
      wait: 2s
connectors:
  llm_slo:
    metrics_flush_interval: 1s
    collector_instance_id: false
exporters:
  # No batch processor, no sending queue, no retries of its own: the
  # exporter hands every refusal straight back to the fan-out.
  otlp_http/traces:
    traces_endpoint: http://%s/v1/traces
    compression: none
    sending_queue:
      enabled: false
    retry_on_failure:
      enabled: false
  otlp_http/metrics:
    endpoint: http://%s
    compression: none
service:
  pipelines:
    traces:
      receivers: [otlp]
      processors: [llm_slo]
      exporters: [otlp_http/traces, llm_slo]
    metrics:
      receivers: [llm_slo]
      exporters: [otlp_http/metrics]
  telemetry:
    metrics:
      readers:
        - pull:
            exporter:
              prometheus:
                host: 127.0.0.1
                port: %d
`

// refusalOutage is how long the backend refuses: four times the wait, so
// request spans are released by the wait timer and inside a request while
// it lasts and the retry pause has doubled three times (0.5 s to 4 s). A
// minute, as an operator's outage may last, exercises nothing more: the
// pause stops doubling at 30 s.
const refusalOutage = 8 * time.Second

// TestAssemblyRefusalEndToEnd: the built collector with trace assembly on,
// the processor feeding an exporter with no queue directly, beside the
// connector (the fan-out hands both read-only data), request spans held
// while the backend refuses: 503 for a while, the listener down for a
// while, or 400. Nothing panics, no connection breaks; after a retryable
// outage every acknowledged span arrives exactly once; after a permanent
// refusal the held spans are counted as given up and logged, not retried.
func TestAssemblyRefusalEndToEnd(t *testing.T) {
	for _, sc := range []struct {
		name      string
		code      int // the backend's answer; 0: not listening
		permanent bool
	}{
		{"503", http.StatusServiceUnavailable, false},
		{"listener down", 0, false},
		{"400", http.StatusBadRequest, true},
	} {
		t.Run(sc.name, func(t *testing.T) {
			runRefusalScenario(t, sc.code, sc.permanent)
		})
	}
}

// refusalRun is one scenario's collector, backend and sender.
type refusalRun struct {
	backend *refusingBackend
	sender  *retryingSender
	metrics string
	logPath string
	alive   func() bool
}

func startRefusalRun(t *testing.T, code int) *refusalRun {
	metricsRecv, err := otlpio.NewReceiver("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = metricsRecv.Close() })
	r := &refusalRun{backend: newRefusingBackend(t)}
	if code != 0 {
		r.backend.answer(t, code)
	}
	grpcPort, telPort := freePort(t), freePort(t)
	cmd := startCollector(t, fmt.Sprintf(refusalConfig, grpcPort, r.backend.addr, metricsRecv.Addr(), telPort))
	r.logPath = filepath.Join(filepath.Dir(cmd.Args[2]), "collector.log")
	r.alive = func() bool { return cmd.ProcessState == nil && cmd.Process.Signal(syscallZero) == nil }
	r.metrics = fmt.Sprintf("http://127.0.0.1:%d/metrics", telPort)
	require.Eventually(t, func() bool {
		resp, err := http.Get(r.metrics) //nolint:noctx // a test's probe
		if err == nil {
			_ = resp.Body.Close()
		}
		return err == nil
	}, 30*time.Second, 100*time.Millisecond, "collector up")
	conn, err := grpc.NewClient(fmt.Sprintf("127.0.0.1:%d", grpcPort), grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	r.sender = &retryingSender{client: ptraceotlp.NewGRPCClient(conn)}
	return r
}

var syscallZero = syscall.Signal(0)

// sendAsync sends td in the background; the result arrives on the channel.
func (r *refusalRun) sendAsync(ctx context.Context, td ptrace.Traces) <-chan sendResult {
	out := make(chan sendResult, 1)
	go func() {
		ok, code, err := r.sender.send(ctx, td)
		out <- sendResult{ok, code, err}
	}()
	return out
}

type sendResult struct {
	acknowledged bool
	code         codes.Code
	err          error
}

func runRefusalScenario(t *testing.T, code int, permanent bool) {
	const n = 10
	r := startRefusalRun(t, code)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	g := newRefusalGroups(n, 0x10)
	outageStart := time.Now()
	// Request spans alone are held whole: their batches are acknowledged at
	// once, and the held spans are in flight through the outage.
	for _, td := range []ptrace.Traces{g.inRequest, g.timer} {
		ok, c, err := r.sender.send(ctx, td)
		require.NoError(t, err)
		require.True(t, ok, "a batch held whole is acknowledged (%v)", c)
	}
	// Their steps release the first group inside a request; the mixed
	// batch is refused with its request spans, which are then not held.
	steps, mixed := r.sendAsync(ctx, g.steps), r.sendAsync(ctx, g.mixed)
	time.Sleep(refusalOutage - time.Since(outageStart))
	r.backend.answer(t, 0)
	recovered := time.Now()
	results := map[string]sendResult{"steps": <-steps, "mixed": <-mixed}
	for name, res := range results {
		require.NoError(t, res.err, name)
		if permanent {
			assert.False(t, res.acknowledged, name)
			assert.Equal(t, codes.InvalidArgument, res.code, "%s: refused as permanent, not retried", name)
		} else {
			assert.True(t, res.acknowledged, name)
		}
	}
	want := map[pcommon.SpanID]int{}
	expected := []ptrace.Traces{g.inRequest, g.timer, g.steps, g.mixed}
	acknowledged := g.inRequest.SpanCount() + g.timer.SpanCount()
	if permanent {
		// The held spans the outage refused are given up; a group held
		// after it arrives.
		after := newRefusalGroups(n, 0x40).timer
		ok, _, err := r.sender.send(ctx, after)
		require.NoError(t, err)
		require.True(t, ok)
		expected = []ptrace.Traces{after}
		acknowledged += after.SpanCount()
	} else {
		acknowledged += g.steps.SpanCount() + g.mixed.SpanCount()
	}
	for _, td := range expected {
		otlpio.Spans(td, func(_ ptrace.ResourceSpans, s ptrace.Span) { want[s.SpanID()] = 1 })
	}
	var got map[pcommon.SpanID]int
	var refusals int
	require.Eventually(t, func() bool {
		got, refusals = r.backend.delivered()
		return len(got) >= len(want)
	}, time.Minute, 100*time.Millisecond, "every acknowledged span delivered")
	t.Logf("spans acknowledged %d, delivered %d (the last %.1f s after recovery)", acknowledged, len(got), time.Since(recovered).Seconds())
	time.Sleep(2 * time.Second) // a second copy would arrive by now
	got, refusals = r.backend.delivered()
	assert.Equal(t, want, got, "every acknowledged span exactly once, nothing else")
	checkRefusalRun(t, r, n, permanent, refusals)
	if code != 0 {
		assert.Positive(t, refusals, "the backend answered %d", code)
	}
}

// checkRefusalRun checks the collector survived, its own counts and its log.
func checkRefusalRun(t *testing.T, r *refusalRun, n int, permanent bool, refusals int) {
	require.True(t, r.alive(), "collector still running")
	ev := collectorEvictions(t, r.metrics)
	log, err := os.ReadFile(r.logPath)
	require.NoError(t, err)
	assert.NotContains(t, string(log), "panic")
	t.Logf("backend refusals %d, sender retries %d, assembly held %v, given up %v", refusals, r.sender.retries.Load(),
		ev["held"], map[string]float64{"refused_downstream": ev["refused_downstream"], "retry_full": ev["retry_full"]})
	if permanent {
		// The request spans of the first two groups were held and refused:
		// given up, counted and logged; the mixed group was never held.
		assert.Equal(t, float64(2*n), ev["refused_downstream"])
		assert.Equal(t, float64(3*n), ev["held"])
		assert.Contains(t, string(log), "giving up held LLM request spans refused downstream")
		return
	}
	assert.Zero(t, ev["refused_downstream"])
	assert.Zero(t, ev["retry_full"])
	assert.Equal(t, float64(3*n), ev["held"], "the mixed group held once, from the acknowledged send")
	assert.Contains(t, string(log), "held LLM request spans refused downstream; sending them again with a backoff")
	assert.Contains(t, string(log), "held LLM request spans accepted downstream again")
	assert.Positive(t, r.sender.retries.Load())
}
