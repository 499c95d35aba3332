// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/llmslo/llmslo/internal/benchspans"
)

// mixParts is a request body's composition: vLLM engine spans (attributes
// only), OpenLLMetry-style client spans of 20 chunk events, semconv client
// spans without events.
type mixParts struct{ engine, chunks, semconv int }

// loadMixParts is the mix the collector sees in an LLM deployment, 100
// spans a request.
var loadMixParts = mixParts{engine: 40, chunks: 30, semconv: 30}

// loadMix builds OTLP/HTTP request bodies of the load mix (loadMixParts).
func loadMix(t testing.TB, bodies int) [][]byte { return mixBodies(t, bodies, loadMixParts) }

// mixBodies builds request bodies of the given composition.
func mixBodies(t testing.TB, bodies int, parts mixParts) [][]byte {
	out := make([][]byte, bodies)
	for b := range out {
		td := ptrace.NewTraces()
		for _, part := range []shape{
			{name: "vllm", spans: parts.engine, events: -1, llm: true, models: 3},
			{name: "chunks", spans: parts.chunks, events: 20, llm: true, models: 3},
		} {
			if part.spans > 0 {
				batch(part).ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
			}
		}
		if parts.semconv > 0 {
			semconvClientSpans(td, parts.semconv)
		}
		// Distinct trace IDs per body, as real traffic has.
		n := 0
		rss := td.ResourceSpans()
		for i := range rss.Len() {
			spans := rss.At(i).ScopeSpans().At(0).Spans()
			for j := range spans.Len() {
				spans.At(j).SetTraceID(pcommon.TraceID{byte(n), byte(b), byte(b >> 8), 7})
				n++
			}
		}
		body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
		require.NoError(t, err)
		out[b] = body
	}
	return out
}

// semconvClientSpans appends n non-streamed GenAI client spans (semconv
// v1.41 attributes, no events) on a resource of their own.
func semconvClientSpans(td ptrace.Traces, n int) {
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "chat-app")
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	for i := range n {
		sp := spans.AppendEmpty()
		sp.SetSpanID(pcommon.SpanID{byte(i), 9})
		benchspans.SemconvClient(sp)
	}
}

// loadResult is one collector run at one offered rate.
type loadResult struct {
	pipeline       string
	round          int
	offered        int // spans/s; 0: as fast as the collector takes them
	sent, refused  int64
	exported       float64
	seconds        float64
	cpuSeconds     float64
	peakRSSMiB     float64
	throughputSpan float64
}

func (r loadResult) line() string {
	return fmt.Sprintf("load round=%d pipeline=%s offered=%d sent=%d refused=%d exported=%.0f lost=%.0f seconds=%.1f cpu_us_per_span=%.2f throughput=%.0f peak_rss_mib=%.1f",
		r.round, r.pipeline, r.offered, r.sent, r.refused, r.exported, float64(r.sent)-r.exported, r.seconds,
		r.cpuSeconds/r.exported*1e6, r.throughputSpan, r.peakRSSMiB)
}

// TestCollectorLoad drives the built distributions over OTLP/HTTP with the
// LLM span mix at fixed rates and at saturation, one arm after another (see
// armNames: the project's distribution without and with the llm_slo pair,
// the contrib-only peer as pass-through, with span_metrics and with
// signal_to_metrics), a fresh collector for each run, and appends one line
// per run to the file LLMSLO_BENCH_LOAD names (make bench). LOAD_SECONDS
// sets the measured time per run (default 10), LOAD_ROUNDS the rounds
// (default 3), LOAD_ARMS (comma-separated) narrows the arms: a single run on
// a shared machine is noisy, so the report takes medians, and the arms'
// order rotates every round so that drift falls on all of them.
func TestCollectorLoad(t *testing.T) {
	out := os.Getenv("LLMSLO_BENCH_LOAD")
	if out == "" {
		t.Skip("set LLMSLO_BENCH_LOAD=<results file> to run (make bench)")
	}
	seconds, rounds := envInt("LOAD_SECONDS", 10), envInt("LOAD_ROUNDS", 3)
	arms := loadArms(t)
	bodies := loadMix(t, 20)
	f, err := os.OpenFile(out, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	require.NoError(t, err)
	defer f.Close()
	for round := 1; round <= rounds; round++ {
		for _, rate := range loadRates() {
			for _, a := range roundOrder(arms, round) {
				r := runLoad(t, a, bodies, rate, time.Duration(seconds)*time.Second)
				r.round = round
				t.Log(r.line())
				_, err := f.WriteString(r.line() + "\n")
				require.NoError(t, err)
			}
		}
	}
}

// loadArms are the arms LOAD_ARMS names, else all; each arm's binary must
// have been built.
func loadArms(t *testing.T) []arm {
	names := armNames
	if s := os.Getenv("LOAD_ARMS"); s != "" {
		names = strings.Split(s, ",")
	}
	var arms []arm
	for _, n := range names {
		a := armByName(t, strings.TrimSpace(n))
		if _, err := os.Stat(a.binary(t)); err != nil {
			t.Fatalf("arm %s: %v (make dist builds the project's distribution, bench/peer/build.sh the peer)", a.name, err)
		}
		arms = append(arms, a)
	}
	return arms
}

// roundOrder rotates the arms by one place per round and reverses every
// other round, so that each arm runs early, late and next to each other arm.
func roundOrder(arms []arm, round int) []arm {
	out := slices.Clone(arms)
	k := (round - 1) % len(out)
	out = append(out[k:], out[:k]...)
	if round%2 == 0 {
		slices.Reverse(out)
	}
	return out
}

// envInt reads a positive integer from the environment, else def.
func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// loadRates are the offered rates in spans/s, 0 meaning saturation;
// LOAD_RATES (comma-separated) narrows them, e.g. LOAD_RATES=20000,0.
func loadRates() []int {
	rates := []int{10_000, 20_000, 40_000, 0}
	if s := os.Getenv("LOAD_RATES"); s != "" {
		rates = rates[:0]
		for _, f := range strings.Split(s, ",") {
			if r, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && r >= 0 {
				rates = append(rates, r)
			}
		}
	}
	return rates
}

func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func runLoad(t *testing.T, a arm, bodies [][]byte, rate int, d time.Duration) loadResult {
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	telPort := freePort(t)
	pprofAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(a.config(t, addr, telPort, pprofAddr)), 0o600))
	cmd := exec.Command(a.binary(t), "--config", cfg)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}, Timeout: 10 * time.Second}
	url := "http://" + addr + "/v1/traces"
	waitReady(t, client, url, bodies[0])
	time.Sleep(time.Second)

	before := cpuSeconds(t, cmd.Process.Pid)
	exportedBefore := telemetryValue(t, telPort, "otelcol_exporter_sent_spans")
	profiled := profileDuring(t, pprofAddr, a.name, rate, d)
	start := time.Now()
	sent, refused := offer(client, url, bodies, rate, d)
	elapsed := time.Since(start).Seconds()
	profiled()
	time.Sleep(2 * time.Second) // the batch processor's timeout is 200ms; leave it room
	r := loadResult{pipeline: a.name, offered: rate, sent: sent, refused: refused, seconds: elapsed}
	r.exported = telemetryValue(t, telPort, "otelcol_exporter_sent_spans") - exportedBefore
	r.cpuSeconds = cpuSeconds(t, cmd.Process.Pid) - before
	r.throughputSpan = r.exported / elapsed
	r.peakRSSMiB = peakRSSMiB(t, cmd.Process.Pid)
	return r
}

// profileDuring fetches a CPU profile of the collector over the middle of
// a saturation run (or of the rate LOAD_PROFILE_RATE names) into the directory LLMSLO_BENCH_PROFILE names, as
// <pipeline>.prof (read it with go tool pprof). It returns the wait for it.
func profileDuring(t *testing.T, pprofAddr, name string, rate int, d time.Duration) func() {
	dir := os.Getenv("LLMSLO_BENCH_PROFILE")
	if dir == "" || rate != envInt("LOAD_PROFILE_RATE", 0) {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		seconds := max(int(d.Seconds())-2, 1)
		resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", pprofAddr, seconds))
		if err != nil {
			t.Errorf("profile: %v", err)
			return
		}
		defer resp.Body.Close()
		f, err := os.Create(filepath.Join(dir, name+".prof"))
		if err != nil {
			t.Errorf("profile: %v", err)
			return
		}
		defer f.Close()
		if _, err := io.Copy(f, resp.Body); err != nil {
			t.Errorf("profile: %v", err)
		}
	}()
	return func() { <-done }
}

// waitReady posts one body until the receiver answers.
func waitReady(t *testing.T, client *http.Client, url string, body []byte) {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if post(client, url, body) == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("the collector did not start within a minute")
}

func post(client *http.Client, url string, body []byte) error {
	resp, err := client.Post(url, "application/x-protobuf", bytes.NewReader(body))
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}

// offer sends bodies of 100 spans for d: at rate spans/s, paced by a
// ticker, or with rate 0 from four workers as fast as the collector
// answers. It returns the spans accepted and refused.
func offer(client *http.Client, url string, bodies [][]byte, rate int, d time.Duration) (sent, refused int64) {
	const spansPerBody = 100
	var ok, bad atomic.Int64
	stop := time.Now().Add(d)
	work := make(chan []byte, 64)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for body := range work {
				if post(client, url, body) != nil {
					bad.Add(spansPerBody)
					continue
				}
				ok.Add(spansPerBody)
			}
		})
	}
	i := 0
	if rate == 0 {
		for time.Now().Before(stop) {
			work <- bodies[i%len(bodies)]
			i++
		}
	} else {
		tick := time.NewTicker(time.Second / time.Duration(rate/spansPerBody))
		for time.Now().Before(stop) {
			<-tick.C
			select {
			case work <- bodies[i%len(bodies)]:
			default: // the workers are behind: the offered rate is not met
				bad.Add(spansPerBody)
			}
			i++
		}
		tick.Stop()
	}
	close(work)
	wg.Wait()
	return ok.Load(), bad.Load()
}

// telemetryValue sums the samples of a counter on the collector's own
// Prometheus endpoint (the metric may carry a _total suffix and labels).
func telemetryValue(t *testing.T, port int, metric string) float64 {
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
	require.NoError(t, err)
	defer resp.Body.Close()
	sum := 0.0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, metric) {
			continue
		}
		rest := line[len(metric):]
		if !strings.HasPrefix(rest, "{") && !strings.HasPrefix(rest, " ") && !strings.HasPrefix(rest, "_total") {
			continue
		}
		fields := strings.Fields(line)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		require.NoError(t, err)
		sum += v
	}
	require.NoError(t, sc.Err())
	return sum
}

// cpuSeconds reads a process's user+system CPU time.
func cpuSeconds(t *testing.T, pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	require.NoError(t, err)
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	utime, _ := strconv.ParseFloat(fields[11], 64)
	stime, _ := strconv.ParseFloat(fields[12], 64)
	return (utime + stime) / 100 // USER_HZ
}

// peakRSSMiB reads the process's high-water resident set (VmHWM).
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
