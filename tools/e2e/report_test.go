// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	llmsloprocessor "github.com/llmslo/llmslo"
	"github.com/llmslo/llmslo/internal/otlpio"
	"github.com/llmslo/llmslo/tools/internal/otlpfile"
	"github.com/llmslo/llmslo/tools/internal/report"
	"github.com/llmslo/llmslo/tools/internal/report/schema"
)

// TestCaptureFromCollector is the capture recipe of docs/report.md with the built
// distribution: the collector's own otlp_http exporter (default settings:
// protobuf, gzip) sends the enriched spans to llmslo capture's receiver, and
// llmslo report reads the file back with the same values.
func TestCaptureFromCollector(t *testing.T) {
	out := filepath.Join(t.TempDir(), "traces.pb")
	f, _, err := otlpfile.OpenCaptureFile(out, false, false)
	require.NoError(t, err)
	capture, err := otlpfile.NewCapture("127.0.0.1:0", f, otlpfile.CaptureOptions{})
	require.NoError(t, err)
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
      - {name: interactive, ttft: 500ms, tpot: 15ms, e2e: 2s}
exporters:
  otlp_http/capture:
    endpoint: http://%s
service:
  pipelines:
    traces:
      receivers: [otlp]
      processors: [llm_slo]
      exporters: [otlp_http/capture]
  telemetry:
    metrics:
      level: none
`, grpcPort, capture.Addr()))

	sender, err := otlpio.NewSender(fmt.Sprintf("127.0.0.1:%d", grpcPort))
	require.NoError(t, err)
	defer sender.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, v := range []string{"v1", "v3"} {
		td, err := golden.ReadTraces(filepath.Join("..", "..", "testdata", "traces", v, "input.yaml"))
		require.NoError(t, err)
		require.NoError(t, sender.Send(ctx, td))
	}
	for capture.Spans() < 2 {
		require.NoError(t, ctx.Err(), "waiting for the collector's export")
		time.Sleep(50 * time.Millisecond)
	}
	require.NoError(t, capture.Close(ctx))
	require.NoError(t, f.Close())

	cfg := llmsloprocessor.NewFactory().CreateDefaultConfig().(*llmsloprocessor.Config)
	opts := report.Options{Processor: report.NewProcessor(llmsloprocessor.NewFactory(), cfg)}
	r, err := report.Run(ctx, opts, report.Inputs{Paths: []string{out}}, nil, 0)
	require.NoError(t, err)
	assert.Equal(t, int64(2), r.Requests)
	m := r.Latency[0].Metrics
	assert.Equal(t, schema.Num(0.1), m["ttft"].P50)                       // V1 and V3: 100 ms
	assert.InEpsilon(t, (0.025+0.0125)/2, float64(m["tpot"].Mean), 1e-12) // 25 and 12.5 ms
	assert.Equal(t, int64(6), m["itl"].Count)                             // [20,20,30,30] and [30,20]
}
