// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/llmslo/llmslo/bench/callgrind"
)

// instrShapes are the request compositions the collector-level count can
// feed: the load mix, and each of its three kinds of span alone.
var instrShapes = map[string]mixParts{
	"mix":     loadMixParts,
	"engine":  {engine: 100},
	"chunks":  {chunks: 100},
	"semconv": {semconv: 100},
}

// TestCollectorInstructions counts the instructions each built collector
// spends per span, under valgrind's callgrind: one P, no asynchronous
// preemption, the binaries linked with their symbols (-ldflags=-w, see
// collector_instructions.sh). Each arm is fed exactly 2N spans, then, in a
// fresh collector, exactly N on the same timeline (held as long after it
// answers as the 2N run was), so that start-up and timers cancel in
// (Ir(2N) − Ir(N)) / N. It writes one line per run to the file
// LLMSLO_BENCH_CALLGRIND names and keeps each run's callgrind output beside
// it (CALLGRIND_KEEP=0 drops them). CALLGRIND_N sets N (default 3200, a
// multiple of the 100-span request), CALLGRIND_REPS the repetitions
// (default 2), CALLGRIND_ARMS and CALLGRIND_SHAPES (mix, engine, chunks,
// semconv) narrow what runs; CALLGRIND_EXPORTER=debug sends the spans to
// the debug exporter instead of over OTLP/HTTP; collector_instructions.sh
// starts a new results file unless CALLGRIND_APPEND=1.
func TestCollectorInstructions(t *testing.T) {
	out := os.Getenv("LLMSLO_BENCH_CALLGRIND")
	if out == "" {
		t.Skip("set LLMSLO_BENCH_CALLGRIND=<results file> to run (make bench; bench/collector_instructions.sh)")
	}
	if _, err := exec.LookPath("valgrind"); err != nil {
		t.Fatal("valgrind is not installed (bench/collector_instructions.sh installs it)")
	}
	n := envInt("CALLGRIND_N", 3200)
	require.Zero(t, n%100, "CALLGRIND_N must be a multiple of 100 (the spans of a request)")
	reps := envInt("CALLGRIND_REPS", 2)
	arms := instrArms(t)
	shapes := strings.Split(envString("CALLGRIND_SHAPES", "mix"), ",")
	f, err := os.OpenFile(out, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	require.NoError(t, err)
	defer f.Close()
	// The command that reproduces these lines, for the report.
	appended := ""
	if st, err := f.Stat(); err == nil && st.Size() > 0 {
		appended = "CALLGRIND_APPEND=1 "
	}
	exporter := ""
	if !exportsOTLP() {
		exporter = "CALLGRIND_EXPORTER=debug "
	}
	_, err = fmt.Fprintf(f, "command %s%sCALLGRIND_N=%d CALLGRIND_REPS=%d CALLGRIND_SHAPES=%s CALLGRIND_ARMS=%s make bench-instructions\n",
		appended, exporter, n, reps, strings.Join(shapes, ","), armList(arms))
	require.NoError(t, err)
	keep := filepath.Join(filepath.Dir(out), "callgrind")
	require.NoError(t, os.MkdirAll(keep, 0o755))
	for _, sh := range shapes {
		parts, ok := instrShapes[strings.TrimSpace(sh)]
		require.True(t, ok, "no shape %q (mix, engine, chunks, semconv)", sh)
		bodies := mixBodies(t, 20, parts)
		for rep := 1; rep <= reps; rep++ {
			for _, a := range roundOrder(arms, rep) {
				hi := runCallgrind(t, a, bodies, 2*n, 0, keep, fmt.Sprintf("%s.%s.%d.%d", sh, a.name, rep, 2*n))
				lo := runCallgrind(t, a, bodies, n, hi.held, keep, fmt.Sprintf("%s.%s.%d.%d", sh, a.name, rep, n))
				for _, r := range []instrRun{hi, lo} {
					r.shape, r.rep = strings.TrimSpace(sh), rep
					t.Log(r.line())
					_, err := f.WriteString(r.line() + "\n")
					require.NoError(t, err)
				}
			}
		}
	}
}

func armList(arms []arm) string {
	names := make([]string, len(arms))
	for i, a := range arms {
		names[i] = a.name
	}
	return strings.Join(names, ",")
}

// instrArms are the arms CALLGRIND_ARMS names, else all of armNames.
func instrArms(t *testing.T) []arm {
	names := armNames
	if s := os.Getenv("CALLGRIND_ARMS"); s != "" {
		names = strings.Split(s, ",")
	}
	var arms []arm
	for _, name := range names {
		a := armByName(t, strings.TrimSpace(name))
		if _, err := os.Stat(a.callgrindBinary(t)); err != nil {
			t.Fatalf("arm %s: %v (bench/collector_instructions.sh builds the binaries with their symbols)", a.name, err)
		}
		arms = append(arms, a)
	}
	return arms
}

// callgrindBinary is the arm's distribution linked with its symbol table,
// which callgrind needs to name functions: CALLGRIND_BIN (default
// results/bin) holds otelcol-llmslo and otelcol-peer.
func (a arm) callgrindBinary(t testing.TB) string {
	name := "otelcol-llmslo"
	if a.peer {
		name = "otelcol-peer"
	}
	abs, err := filepath.Abs(filepath.Join(envString("CALLGRIND_BIN", filepath.Join("results", "bin")), name))
	require.NoError(t, err)
	return abs
}

func envString(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// instrRun is one collector run under callgrind.
type instrRun struct {
	shape, arm string
	rep, spans int
	held       time.Duration // from the first answer to the stop
	p          *callgrind.Profile
}

// line is the run as the report reads it: the total and every category's
// own count (the GC's among them).
func (r instrRun) line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "callgrind shape=%s arm=%s rep=%d spans=%d held_s=%.1f ir=%d",
		r.shape, r.arm, r.rep, r.spans, r.held.Seconds(), r.p.Total)
	cats := r.p.ByCategory()
	for _, c := range callgrind.Categories {
		fmt.Fprintf(&b, " %s=%d", callgrind.Key(c), cats[c])
	}
	return b.String()
}

// runCallgrind starts the arm's collector under callgrind, posts exactly
// spans spans (in requests of 100, one at a time, each answered before the
// next), waits until hold has passed since the collector first answered
// (or, with hold 0, a settling time after the last answer), checks that
// every span was exported, has callgrind write its counts, and stops the
// collector.
func runCallgrind(t *testing.T, a arm, bodies [][]byte, spans int, hold time.Duration, dir, name string) instrRun {
	if exportsOTLP() {
		sink := discardSink(t)
		defer sink.Close()
		a.traceExporter = sink.URL
	}
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	telPort := freePort(t)
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(a.config(t, addr, telPort, fmt.Sprintf("127.0.0.1:%d", freePort(t)))), 0o600))
	outFile := filepath.Join(dir, name+".callgrind")
	cmd := exec.Command("valgrind", "--tool=callgrind", "--callgrind-out-file="+outFile,
		a.callgrindBinary(t), "--config", cfg)
	// cpu.rdtscp=off: valgrind does not know the RDTSCP instruction.
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1", "GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	stopped := false
	defer func() {
		if !stopped {
			_ = cmd.Process.Kill()
			t.Logf("%s: valgrind stopped: %v", name, <-done)
			t.Logf("%s: valgrind's output:\n%s", name, stderr.String())
		}
	}()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}, Timeout: 5 * time.Minute}
	url := "http://" + addr + "/v1/traces"
	ready := waitAnswer(t, client, url, done)
	for i := range spans / 100 {
		require.NoError(t, post(client, url, bodies[i%len(bodies)]), "%s: request %d", name, i)
	}
	if hold == 0 {
		// The batch processor sends within 200ms; callgrind runs the
		// collector about fifty times slower.
		hold = time.Since(ready) + 10*time.Second
	}
	if wait := time.Until(ready.Add(hold)); wait > 0 {
		time.Sleep(wait)
	} else {
		t.Logf("%s: the run took %s longer than the timeline it shares (a loaded machine): timers may not cancel",
			name, -wait)
	}
	exported := telemetryValue(t, telPort, "otelcol_exporter_sent_spans")
	// callgrind_control asks callgrind for its counts so far (as
	// <outFile>.1), without a signal: callgrind fails an assertion when the
	// Go runtime handles SIGTERM. The collector's shutdown is not counted;
	// it would cancel anyway.
	dump, err := exec.Command("callgrind_control", "-d", strconv.Itoa(cmd.Process.Pid)).CombinedOutput()
	require.NoError(t, err, "%s: callgrind_control: %s", name, dump)
	p, err := callgrind.ReadFile(outFile + ".1")
	require.NoError(t, err)
	_ = cmd.Process.Kill()
	t.Logf("%s: valgrind stopped: %v", name, <-done)
	stopped = true
	require.Equal(t, float64(spans), exported, "%s: spans exported", name)
	_ = os.Remove(outFile) // empty: the process never reaches its own dump
	if os.Getenv("CALLGRIND_KEEP") == "0" {
		require.NoError(t, os.Remove(outFile+".1"))
	} else {
		require.NoError(t, os.Rename(outFile+".1", outFile))
	}
	return instrRun{arm: a.name, spans: spans, held: hold, p: p}
}

// waitAnswer posts an empty request (no spans: the same cost in every run)
// until the receiver answers, and returns when it did.
func waitAnswer(t *testing.T, client *http.Client, url string, exited chan error) time.Time {
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		if post(client, url, nil) == nil {
			return time.Now()
		}
		select {
		case err := <-exited:
			exited <- err // for the caller's deferred wait
			t.Fatalf("the collector exited before it answered: %v", err)
		case <-time.After(250 * time.Millisecond):
		}
	}
	t.Fatal("the collector did not answer within 5 minutes under callgrind")
	return time.Time{}
}

// exportsOTLP reports whether the arms export their spans over OTLP/HTTP
// (the default) rather than to the debug exporter, which encodes nothing
// (CALLGRIND_EXPORTER=debug, as the figures before the OTLP export were
// measured).
func exportsOTLP() bool { return envString("CALLGRIND_EXPORTER", "otlp") != "debug" }

// discardSink answers OTLP/HTTP exports with success and keeps nothing:
// the arms export their spans over OTLP/HTTP as a forwarding collector
// does, so each pays for encoding what it wrote on them, and the sink
// costs the collector under count nothing beyond the export itself.
func discardSink(t *testing.T) *httptest.Server {
	t.Helper()
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	}))
}
