package bench

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmslo/llmslo/internal/otlpio"
)

// pipelines are the two collectors compared: the same OTLP receiver, batch
// processor and exporter, with and without the llm_slo components.
var pipelines = map[string]string{
	"without_llmslo": `
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: %s
processors:
  batch:
exporters:
  debug:
    verbosity: basic
    sampling_initial: 1
    sampling_thereafter: 1000
service:
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [debug]
  telemetry:
    metrics:
      level: none
`,
	"with_llmslo": `
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: %s
processors:
  batch:
  llm_slo:
    slos:
      - name: interactive
        ttft: 500ms
        tpot: 15ms
        e2e: 2s
connectors:
  llm_slo:
    metrics_flush_interval: 5s
exporters:
  debug:
    verbosity: basic
    sampling_initial: 1
    sampling_thereafter: 1000
service:
  pipelines:
    traces:
      receivers: [otlp]
      processors: [llm_slo, batch]
      exporters: [debug, llm_slo]
    metrics:
      receivers: [llm_slo]
      exporters: [debug]
  telemetry:
    metrics:
      level: none
`,
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

// TestCollectorCPU measures the built distribution's CPU seconds per million
// spans at a fixed span rate, with and without the llm_slo components. It
// runs only when LLMSLO_BENCH_E2E is set (make bench); it appends its
// results to the file that variable names.
func TestCollectorCPU(t *testing.T) {
	out := os.Getenv("LLMSLO_BENCH_E2E")
	if out == "" {
		t.Skip("set LLMSLO_BENCH_E2E=<results file> to run (make bench)")
	}
	bin, err := filepath.Abs(filepath.Join("..", "dist", "otelcol-llmslo"))
	require.NoError(t, err)
	// A mix of the producer shapes: engine spans and 16-chunk client spans.
	var batches []ptrace.Traces
	for i := range 10 {
		s := shapes[i%2]
		b := batch(shape{name: s.name, spans: 100, events: s.events, llm: true, models: 3})
		batches = append(batches, b)
	}
	const rate, seconds = 50, 20 // batches of 100 spans: 5,000 spans/s
	f, err := os.OpenFile(out, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	require.NoError(t, err)
	defer f.Close()
	for _, name := range []string{"without_llmslo", "with_llmslo"} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := ln.Addr().String()
		ln.Close()
		cfg := filepath.Join(t.TempDir(), "config.yaml")
		require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf(pipelines[name], addr)), 0o600))
		cmd := exec.Command(bin, "--config", cfg)
		require.NoError(t, cmd.Start())
		sender, err := otlpio.NewSender(addr)
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		require.NoError(t, sender.Send(ctx, batches[0])) // waits for startup
		time.Sleep(time.Second)
		before := cpuSeconds(t, cmd.Process.Pid)
		spans := 0
		tick := time.NewTicker(time.Second / rate)
		for i := range rate * seconds {
			<-tick.C
			td := ptrace.NewTraces()
			batches[i%len(batches)].CopyTo(td)
			require.NoError(t, sender.Send(ctx, td))
			spans += td.SpanCount()
		}
		tick.Stop()
		time.Sleep(2 * time.Second) // drain the batch processor
		cpu := cpuSeconds(t, cmd.Process.Pid) - before
		cancel()
		_ = sender.Close()
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		line := fmt.Sprintf("%s spans=%d rate=%d/s cpu_seconds=%.2f cpu_seconds_per_million_spans=%.1f\n", name, spans, rate*100, cpu, cpu/float64(spans)*1e6)
		t.Log(strings.TrimSpace(line))
		_, err = f.WriteString(line)
		require.NoError(t, err)
	}
}
