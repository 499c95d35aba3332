// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/llmslo/llmslo/internal/otlpio"
)

// traceRouter is the front tier of a fleet, written for this test: it
// stands in for contrib's loadbalancingexporter with routing_key: traceID
// and a static resolver (which cannot be built here), in the one way the
// test relies on: every span goes to the backend its trace ID picks from
// the same ordered backend list on every front node, whichever front node
// it entered, and a refused or failed forward is retried (as the
// exporter's retry_on_failure does) instead of going elsewhere. The
// exporter hashes onto a ring; this router takes FNV-1a modulo the list.
type traceRouter struct {
	srv      *http.Server
	ln       net.Listener
	backends []string
	client   *http.Client
	// roundRobin makes the router a plain balancer instead: each batch
	// goes whole to the next backend, whatever its traces (what the docs
	// say never to put between the tiers).
	roundRobin bool
	next       atomic.Uint32
}

func newTraceRouter(t *testing.T, backends []string, roundRobin bool) *traceRouter {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	r := &traceRouter{ln: ln, backends: backends, client: &http.Client{Timeout: 10 * time.Second}, roundRobin: roundRobin}
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/traces", r.handle)
	r.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = r.srv.Serve(ln) }()
	t.Cleanup(func() { _ = r.srv.Close() })
	return r
}

func (r *traceRouter) addr() string { return r.ln.Addr().String() }

func (r *traceRouter) handle(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	er := ptraceotlp.NewExportRequest()
	if err == nil {
		err = er.UnmarshalProto(body)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	parts := splitByTrace(er.Traces(), len(r.backends))
	if r.roundRobin {
		parts = make([]ptrace.Traces, len(r.backends))
		for i := range parts {
			parts[i] = ptrace.NewTraces()
		}
		parts[int(r.next.Add(1))%len(parts)] = er.Traces()
	}
	var wg sync.WaitGroup
	errs := make([]error, len(parts))
	for i, td := range parts {
		if td.SpanCount() == 0 {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = r.forward(req.Context(), r.backends[i], td)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	b, _ := ptraceotlp.NewExportResponse().MarshalProto()
	_, _ = w.Write(b)
}

// forward posts td to backend until it is accepted, for up to a minute.
func (r *traceRouter) forward(ctx context.Context, backend string, td ptrace.Traces) error {
	body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		return err
	}
	pause := 50 * time.Millisecond
	deadline := time.Now().Add(time.Minute)
	for {
		err = r.post(ctx, backend, body)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
		pause = min(2*pause, time.Second)
	}
}

func (r *traceRouter) post(ctx context.Context, backend string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+backend+"/v1/traces", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	resp, err := r.client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", backend, resp.Status)
	}
	return nil
}

// splitByTrace splits td into n batches by trace ID, keeping each span's
// resource and scope.
func splitByTrace(td ptrace.Traces, n int) []ptrace.Traces {
	out := make([]ptrace.Traces, n)
	for i := range out {
		out[i] = ptrace.NewTraces()
	}
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			dst := make([]ptrace.SpanSlice, n)
			for _, span := range ss.Spans().All() {
				id := span.TraceID()
				h := fnv.New32a()
				_, _ = h.Write(id[:])
				i := int(h.Sum32() % uint32(n))
				if dst[i] == (ptrace.SpanSlice{}) {
					drs := out[i].ResourceSpans().AppendEmpty()
					rs.Resource().CopyTo(drs.Resource())
					drs.SetSchemaUrl(rs.SchemaUrl())
					dss := drs.ScopeSpans().AppendEmpty()
					ss.Scope().CopyTo(dss.Scope())
					dss.SetSchemaUrl(ss.SchemaUrl())
					dst[i] = dss.Spans()
				}
				span.CopyTo(dst[i].AppendEmpty())
			}
		}
	}
	return out
}

// postTraces sends td to an OTLP/HTTP endpoint once.
func postTraces(ctx context.Context, endpoint string, td ptrace.Traces) error {
	r := &traceRouter{client: &http.Client{Timeout: time.Minute}}
	body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		return err
	}
	return r.post(ctx, endpoint, body)
}

// fleetRequest is one generated request and the values it must come out
// with: the generator's truth.
type fleetRequest struct {
	id                      pcommon.TraceID
	name                    string
	ttft, e2e, itlMax, itlM float64
	met                     bool
	request                 ptrace.Span // in its own ptrace.Traces
	steps                   []ptrace.Span
}

// fleetSLO is the SLO the second tier judges: the verdict turns on the
// largest gap, which only complete steps give.
const fleetSLO = `
    slos:
      - name: fleet
        ttft: 500ms
        itl: 300ms`

// genRequests makes n requests, SGLang and TGI alternately, with 3 to 12
// tokens, gaps of 10-80 ms and now and then a stall of 300-500 ms.
func genRequests(rng *rand.Rand, n int, base int64) []*fleetRequest {
	out := make([]*fleetRequest, n)
	for i := range out {
		r := &fleetRequest{}
		for b := range r.id {
			r.id[b] = byte(rng.Uint32())
		}
		k := 3 + rng.IntN(10)
		start := base + int64(i)*1e6
		ttft := float64(50+rng.IntN(400)) / 1e3
		times := []float64{ttft} // output times after start, s
		for range k - 1 {
			gap := float64(10+rng.IntN(70)) / 1e3
			if rng.IntN(8) == 0 {
				gap = float64(300+rng.IntN(200)) / 1e3
			}
			times = append(times, times[len(times)-1]+gap)
		}
		if i%2 == 0 {
			sglangRequest(r, start, k, times)
		} else {
			tgiRequest(r, start, k, times)
		}
		r.met = r.ttft <= 0.5 && r.itlMax <= 0.3
		out[i] = r
	}
	return out
}

func ns(start int64, s float64) pcommon.Timestamp {
	return pcommon.Timestamp(start + int64(math.Round(s*1e9)))
}

func newSpan(r *fleetRequest, name string, start, end pcommon.Timestamp) ptrace.Span {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "fleet")
	s := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	s.SetName(name)
	s.SetTraceID(r.id)
	s.SetSpanID(pcommon.SpanID{byte(len(r.steps)), 1})
	s.SetStartTimestamp(start)
	s.SetEndTimestamp(end)
	return s
}

// sglangRequest: the first token is the engine's (prefill); decode step c
// (decode_ct c) ends at the c-th output after it. The gaps are those
// between decode steps.
func sglangRequest(r *fleetRequest, start int64, k int, times []float64) {
	r.name = fmt.Sprintf(" Req %x", r.id[:4])
	r.ttft, r.e2e = times[0], times[k-1]
	r.request = newSpan(r, r.name, ns(start, 0), ns(start, r.e2e+0.001))
	_ = r.request.Attributes().FromRaw(map[string]any{"rid": fmt.Sprintf("%x", r.id[:8]),
		"gen_ai.usage.completion_tokens": k, "gen_ai.latency.time_to_first_token": r.ttft, "gen_ai.latency.e2e": r.e2e})
	for c := 1; c < k; c++ {
		s := newSpan(r, "decode_loop", ns(start, times[c-1]), ns(start, times[c]))
		s.Attributes().PutInt("decode_ct", int64(c))
		r.steps = append(r.steps, s)
	}
	r.itlMax, r.itlM = gapsOf(times[1:])
}

// tgiRequest: every token is a send_generation step starting at its
// output time; the last says how many tokens there were.
func tgiRequest(r *fleetRequest, start int64, k int, times []float64) {
	r.name = "chat_completions"
	r.ttft, r.e2e = times[0], times[k-1]
	r.request = newSpan(r, r.name, ns(start, 0), ns(start, r.e2e+0.002))
	_ = r.request.Attributes().FromRaw(map[string]any{"total_time": fmt.Sprintf("%.3fms", (r.e2e+0.002)*1e3),
		"queue_time": "1.5ms"})
	for c := 1; c <= k; c++ {
		s := newSpan(r, "send_generation", ns(start, times[c-1]), ns(start, times[c-1]+0.0001))
		final := "None"
		if c == k {
			final = fmt.Sprintf(`Some(GeneratedText { text: "x", generated_tokens: %d, finish_reason: Length, seed: None })`, k)
		}
		s.Attributes().PutStr("generation", fmt.Sprintf(`Generation { request_id: 1, prefill_tokens: None, tokens: Some(Tokens { ids: [%d], logprobs: [-0.5], texts: ["t"], is_special: [false] }), generated_text: %s, top_tokens: [] }`, c, final))
		r.steps = append(r.steps, s)
	}
	r.itlMax, r.itlM = gapsOf(times)
}

func gapsOf(times []float64) (largest, mean float64) {
	for i := 1; i < len(times); i++ {
		largest = max(largest, times[i]-times[i-1])
	}
	return largest, (times[len(times)-1] - times[0]) / float64(len(times)-1)
}

// batchOf puts spans (copies) into one batch, each under its resource.
func batchOf(spans []ptrace.Span) ptrace.Traces {
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty()
	ss.Resource().Attributes().PutStr("service.name", "fleet")
	dst := ss.ScopeSpans().AppendEmpty().Spans()
	for _, s := range spans {
		s.CopyTo(dst.AppendEmpty())
	}
	return td
}

// sendFleet sends reqs in chunks through the front nodes: each request span
// enters one front node, its steps, shuffled, in three pieces: one through
// the other node, one through each node with the next chunk (so requests
// wait for their last steps, held). The sends of a round go in random
// order, at once.
func sendFleet(t *testing.T, ctx context.Context, rng *rand.Rand, fronts []string, reqs []*fleetRequest, chunk int, pause time.Duration) {
	n := len(fronts)
	late := make([][]ptrace.Span, n)
	for from := 0; from < len(reqs)+chunk; from += chunk {
		batches := append(make([][]ptrace.Span, n), late...)
		late = make([][]ptrace.Span, n)
		for j, r := range reqs[min(from, len(reqs)):min(from+chunk, len(reqs))] {
			a := j % n
			b := (a + 1) % n
			batches[a] = append(batches[a], r.request)
			steps := append([]ptrace.Span(nil), r.steps...)
			rng.Shuffle(len(steps), func(x, y int) { steps[x], steps[y] = steps[y], steps[x] })
			cut1, cut2 := len(steps)/3, 2*len(steps)/3
			batches[b] = append(batches[b], steps[:cut1]...)
			late[a] = append(late[a], steps[cut1:cut2]...)
			late[b] = append(late[b], steps[cut2:]...)
		}
		var wg sync.WaitGroup
		for _, i := range rng.Perm(len(batches)) {
			if len(batches[i]) == 0 {
				continue
			}
			td := batchOf(batches[i])
			wg.Add(1)
			go func() {
				defer wg.Done()
				assert.NoError(t, postTraces(ctx, fronts[i%n], td))
			}()
		}
		wg.Wait()
		time.Sleep(pause)
	}
}

// fleetVerdict is what the second tier's exported request spans say
// against the generator's truth.
type fleetVerdict struct {
	requests, assembled, incomplete int
	// wrong: a value or verdict of a span not marked incomplete that
	// differs from the truth (a value from partial steps counts here);
	// markedWithSteps: a span marked incomplete that carries step values.
	wrong, wrongVerdicts, markedWithSteps int
	missing, duplicated                   int
}

func judgeFleet(t *testing.T, reqs []*fleetRequest, exported []ptrace.Traces) fleetVerdict {
	byID := map[pcommon.TraceID][]ptrace.Span{}
	for _, td := range exported {
		otlpio.Spans(td, func(_ ptrace.ResourceSpans, s ptrace.Span) {
			if s.Name() == "chat_completions" || strings.HasPrefix(s.Name(), " Req ") {
				byID[s.TraceID()] = append(byID[s.TraceID()], s)
			}
		})
	}
	v := fleetVerdict{requests: len(reqs)}
	for _, r := range reqs {
		got := byID[r.id]
		switch {
		case len(got) == 0:
			v.missing++
			continue
		case len(got) > 1:
			v.duplicated++
		}
		attrs := got[0].Attributes()
		if e, _ := attrs.Get("llm.metrics.error"); strings.Contains(e.Str(), "assembly:incomplete") {
			v.incomplete++
			for _, k := range []string{"llm.itl.max", "llm.itl.mean", "llm.itl.gaps"} {
				if _, ok := attrs.Get(k); ok {
					v.markedWithSteps++
				}
			}
			if met, ok := attrs.Get("llm.slo.fleet.met"); ok && met.Bool() != r.met {
				v.wrongVerdicts++
			}
			continue
		}
		v.assembled++
		bad := false
		for k, want := range map[string]float64{"llm.ttft": r.ttft, "llm.e2e": r.e2e, "llm.itl.max": r.itlMax, "llm.itl.mean": r.itlM} {
			got, ok := attrs.Get(k)
			if !ok || math.Abs(got.Double()-want) > 1e-9 {
				if !bad && v.wrong < 5 {
					written := "absent"
					if ok {
						written = got.AsString()
					}
					t.Logf("%s %x: %s = %s, truth %v", r.name, r.id[:4], k, written, want)
				}
				bad = true
			}
		}
		if bad {
			v.wrong++
		}
		if met, ok := attrs.Get("llm.slo.fleet.met"); !ok || met.Bool() != r.met {
			v.wrongVerdicts++
		}
	}
	return v
}

// requestsCounted sums llm.slo.requests over every replica and every run
// of one (collector.instance.id), each series at its latest cumulative
// value: what the generated rules' sum(increase(...)) adds up.
func requestsCounted(batches []pmetric.Metrics) int64 {
	latest := map[string]int64{}
	for _, md := range batches {
		for _, rm := range md.ResourceMetrics().All() {
			inst, _ := rm.Resource().Attributes().Get("collector.instance.id")
			for _, sm := range rm.ScopeMetrics().All() {
				for _, m := range sm.Metrics().All() {
					if m.Name() != "llm.slo.requests" || m.Type() != pmetric.MetricTypeSum {
						continue
					}
					for _, dp := range m.Sum().DataPoints().All() {
						latest[inst.Str()+fmt.Sprint(dp.Attributes().AsRaw())] = dp.IntValue()
					}
				}
			}
		}
	}
	var total int64
	for _, n := range latest {
		total += n
	}
	return total
}

// secondTier starts one collector of the second tier on port, with trace
// assembly, exporting spans and metrics to sink.
func secondTier(t *testing.T, port int, sink string) *exec.Cmd {
	return startCollector(t, fmt.Sprintf(`
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:%d
processors:
  llm_slo:
    trace_assembly:
      enabled: true
      wait: 3s%s
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
      processors: [llm_slo]
      exporters: [otlp_http, llm_slo]
    metrics:
      receivers: [llm_slo]
      exporters: [otlp_http]
  telemetry:
    metrics:
      level: none
`, port, fleetSLO, sink))
}

// waitListening waits until something accepts connections on port.
func waitListening(t *testing.T, port int) {
	require.Eventually(t, func() bool {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			_ = c.Close()
		}
		return err == nil
	}, 30*time.Second, 50*time.Millisecond)
}

type fleet struct {
	sink   *otlpio.Receiver
	ports  []int
	cmds   []*exec.Cmd
	fronts []string
}

// startFleet starts replicas second-tier collectors behind two front
// nodes; with one replica and direct set, the senders reach it directly
// (one collector, no front tier).
func startFleet(t *testing.T, replicas int, direct, roundRobin bool) *fleet {
	sink, err := otlpio.NewReceiver("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = sink.Close() })
	f := &fleet{sink: sink}
	var backends []string
	for range replicas {
		port := freePort(t)
		f.ports = append(f.ports, port)
		f.cmds = append(f.cmds, secondTier(t, port, sink.Addr()))
		backends = append(backends, fmt.Sprintf("127.0.0.1:%d", port))
	}
	for _, port := range f.ports {
		waitListening(t, port)
	}
	for range 2 {
		if direct {
			f.fronts = append(f.fronts, backends[0])
			continue
		}
		f.fronts = append(f.fronts, newTraceRouter(t, backends, roundRobin).addr())
	}
	return f
}

// settle waits until every request span is out and the connectors'
// counters have been flushed with it.
func (f *fleet) settle(t *testing.T, ctx context.Context, reqs []*fleetRequest) {
	spans := 0
	for _, r := range reqs {
		spans += 1 + len(r.steps)
	}
	require.NoError(t, f.sink.WaitSpans(ctx, spans))
	require.Eventually(t, func() bool { return requestsCounted(f.sink.Metrics()) >= int64(len(reqs)) },
		30*time.Second, 100*time.Millisecond)
	time.Sleep(time.Second) // one more flush: a count beyond the requests shows too
}

// TestFleetTraceAssembly: two front nodes routing by trace ID to two
// collectors with trace assembly (and, for comparison, one collector
// reached directly); each request span enters one front node and its
// steps, shuffled, arrive in three pieces through both, the last two with
// the next round. Every request comes out assembled with the generator's
// values and verdict, and the connectors' counters over the replicas add
// up to the requests.
func TestFleetTraceAssembly(t *testing.T) {
	for _, tt := range []struct {
		name     string
		replicas int
		direct   bool
	}{{"two tiers", 2, false}, {"one collector", 1, true}} {
		t.Run(tt.name, func(t *testing.T) {
			f := startFleet(t, tt.replicas, tt.direct, false)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			rng := rand.New(rand.NewPCG(44, 1))
			reqs := genRequests(rng, 400, t0)
			sendFleet(t, ctx, rng, f.fronts, reqs, 40, 50*time.Millisecond)
			f.settle(t, ctx, reqs)

			v := judgeFleet(t, reqs, f.sink.Traces())
			t.Logf("%s: %+v, counted %d", tt.name, v, requestsCounted(f.sink.Metrics()))
			assert.Equal(t, fleetVerdict{requests: len(reqs), assembled: len(reqs)}, v)
			assert.Equal(t, int64(len(reqs)), requestsCounted(f.sink.Metrics()), "llm.slo.requests over the replicas")
		})
	}
}

// TestFleetWithoutAffinity: the front nodes balance whole batches round
// robin instead of routing by trace ID, so a request's steps are split
// over the replicas. Most requests cannot be assembled; none gets a value
// from part of its steps: each is assembled exactly or marked
// assembly:incomplete, and each is counted once.
func TestFleetWithoutAffinity(t *testing.T) {
	f := startFleet(t, 2, false, true)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rng := rand.New(rand.NewPCG(44, 3))
	reqs := genRequests(rng, 400, t0)
	sendFleet(t, ctx, rng, f.fronts, reqs, 40, 50*time.Millisecond)
	f.settle(t, ctx, reqs)

	v := judgeFleet(t, reqs, f.sink.Traces())
	t.Logf("round robin: %+v, counted %d", v, requestsCounted(f.sink.Metrics()))
	assert.Zero(t, v.missing, "lost")
	assert.Zero(t, v.duplicated, "exported twice")
	assert.Zero(t, v.wrong, "values not marked incomplete that differ from the truth")
	assert.Zero(t, v.wrongVerdicts, "verdicts")
	assert.Zero(t, v.markedWithSteps, "marked incomplete but carrying step values")
	assert.Equal(t, len(reqs), v.assembled+v.incomplete)
	assert.Equal(t, int64(len(reqs)), requestsCounted(f.sink.Metrics()), "llm.slo.requests over both replicas")
}

// TestFleetReplicaRestart: one second-tier replica is stopped with SIGTERM
// under load and started again on its port while the front nodes retry
// towards it. Nothing is lost or counted twice, and every request is
// either assembled exactly or marked assembly:incomplete without a value
// from its steps.
func TestFleetReplicaRestart(t *testing.T) {
	f := startFleet(t, 2, false, false)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rng := rand.New(rand.NewPCG(44, 2))
	reqs := genRequests(rng, 600, t0)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sendFleet(t, ctx, rng, f.fronts, reqs, 20, 100*time.Millisecond)
	}()
	time.Sleep(1500 * time.Millisecond)
	require.NoError(t, f.cmds[1].Process.Signal(syscall.SIGTERM))
	_ = f.cmds[1].Wait()
	f.cmds[1] = secondTier(t, f.ports[1], f.sink.Addr())
	waitListening(t, f.ports[1])
	<-done
	f.settle(t, ctx, reqs)

	v := judgeFleet(t, reqs, f.sink.Traces())
	t.Logf("restart: %+v, counted %d", v, requestsCounted(f.sink.Metrics()))
	assert.Zero(t, v.missing, "lost")
	assert.Zero(t, v.duplicated, "exported twice")
	assert.Zero(t, v.wrong, "values not marked incomplete that differ from the truth")
	assert.Zero(t, v.wrongVerdicts, "verdicts")
	assert.Zero(t, v.markedWithSteps, "marked incomplete but carrying step values")
	assert.Equal(t, len(reqs), v.assembled+v.incomplete)
	assert.Equal(t, int64(len(reqs)), requestsCounted(f.sink.Metrics()), "llm.slo.requests over both replicas and both runs")
}
