// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	llmsloprocessor "github.com/llmslo/llmslo"
	"github.com/llmslo/llmslo/tools/internal/loadgen"
	"github.com/llmslo/llmslo/tools/internal/otlpfile"
	"github.com/llmslo/llmslo/tools/internal/report"
	"github.com/llmslo/llmslo/tools/internal/report/render"
	"github.com/llmslo/llmslo/tools/internal/report/schema"
)

// capacityModel and capacitySLO are the end-to-end capacity run's: the
// 70B profile (16 slots per engine, queueing beyond) and a TTFT bound its
// queue breaks.
const capacityModel = "llama-3.1-70b-instruct"

var capacitySLO = loadgen.SLO{TTFT: time.Second}

// TestCapacityEndToEnd: the load generator ramps from 2 to 16 requests per
// second over a minute of synthetic time onto two replicas of the 70B
// profile, past what they hold, through the built collector; llmslo
// capture keeps the enriched spans and llmslo report reads them back. With
// every level kept apart, the report's levels are the generator's truth
// level by level (its in-flight count on arrival, and its verdicts); the
// knee is where the truth's levels put it by the documented rule, and the
// report with its default merging states one.
func TestCapacityEndToEnd(t *testing.T) {
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
      - {name: capacity, ttft: 1s, objective: 90}
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

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	truths, err := loadgen.Run(ctx, loadgen.Config{Endpoint: fmt.Sprintf("127.0.0.1:%d", grpcPort), Seed: 47, Fast: true, Count: 1 << 20,
		Duration: time.Minute, Ramp: &loadgen.Ramp{From: 2, To: 16}, Replicas: 2, ModelAttr: true,
		Models: map[string]float64{capacityModel: 1}, Shapes: map[loadgen.Shape]float64{loadgen.ShapeVLLM: 1}})
	require.NoError(t, err)
	for capture.Spans() < int64(len(truths)) {
		require.NoError(t, ctx.Err(), "waiting for the collector's export: %d of %d spans", capture.Spans(), len(truths))
		time.Sleep(50 * time.Millisecond)
	}
	require.NoError(t, capture.Close(ctx))
	require.NoError(t, f.Close())

	want := truthLevels(truths)
	exact := capacityReport(ctx, t, out, 1)
	require.Len(t, exact.Capacity, 1)
	c := exact.Capacity[0]
	assert.Equal(t, schema.Group{"model": capacityModel, "layer": "server"}, c.Group)
	assert.Equal(t, "service.instance.id", c.ReplicaKey)
	assert.Equal(t, int64(2), c.ReplicasObserved)
	require.Len(t, c.Levels, len(want), "levels")
	for i, l := range c.Levels {
		assert.Equal(t, want[i], [3]int64{l.InFlight, l.Requests, l.Met}, "level %d: in flight, requests, met", l.InFlight)
		assert.Equal(t, l.InFlight, l.InFlightMax, "not merged")
	}
	kneeAt := truthKnee(want, 0.90)
	require.NotNil(t, kneeAt, "the ramp must pass the replicas' capacity")
	assert.Equal(t, schema.KneeFound, c.Knee)
	assert.Equal(t, kneeAt, c.KneeInFlight)

	merged := capacityReport(ctx, t, out, report.DefaultCapacityMinRequests)
	require.Len(t, merged.Capacity, 1)
	m := merged.Capacity[0]
	assert.Equal(t, schema.KneeFound, m.Knee)
	var txt bytes.Buffer
	require.NoError(t, render.WriteText(&txt, merged))
	assert.Contains(t, strings.Join(strings.Fields(txt.String()), " "), fmt.Sprintf("the objective holds up to %d in flight per replica", *m.KneeInFlight))
	var rows []string
	for _, l := range c.Levels {
		rows = append(rows, fmt.Sprintf("%d:%d/%d", l.InFlight, l.Met, l.Requests))
	}
	t.Logf("%d requests; levels (in flight: met/requests, report = truth): %s", len(truths), strings.Join(rows, " "))
	t.Logf("knee: %d in flight per replica unmerged (truth: %d), %d with levels of at least %d; peak %d, P99 %d; replicas observed %d, needed %d (%d at the P99)",
		*c.KneeInFlight, *kneeAt, *m.KneeInFlight, report.DefaultCapacityMinRequests, m.PeakInFlight, m.P99InFlight,
		m.ReplicasObserved, *m.ReplicasNeeded, *m.ReplicasNeededP99)
}

// capacityReport is llmslo report on path with the run's SLO, its levels
// merged to minRequests.
func capacityReport(ctx context.Context, t *testing.T, path string, minRequests int) *report.Report {
	cfg := llmsloprocessor.NewFactory().CreateDefaultConfig().(*llmsloprocessor.Config)
	objective := 90.0
	sc := llmsloprocessor.SLOConfig{Name: "capacity", Objective: &objective}
	sc.SetThreshold("ttft", capacitySLO.TTFT)
	cfg.SLOs = []llmsloprocessor.SLOConfig{sc}
	require.NoError(t, cfg.Validate())
	opts := report.Options{Processor: report.NewProcessor(llmsloprocessor.NewFactory(), cfg), CapacityMinRequests: minRequests}
	r, err := report.Run(ctx, opts, report.Inputs{Paths: []string{path}}, nil, 0)
	require.NoError(t, err)
	return r
}

// truthLevels counts the truth's engine spans by their in-flight count on
// arrival: [in flight, requests, met the SLO], ascending.
func truthLevels(truths []loadgen.Truth) [][3]int64 {
	by := map[int64]*[3]int64{}
	for i := range truths {
		tr := &truths[i]
		if tr.Layer != "server" {
			continue
		}
		l := by[int64(tr.InFlight)]
		if l == nil {
			l = &[3]int64{int64(tr.InFlight)}
			by[int64(tr.InFlight)] = l
		}
		l[1]++
		if capacitySLO.Good(tr) {
			l[2]++
		}
	}
	var out [][3]int64
	for _, l := range by {
		out = append(out, *l)
	}
	slices.SortFunc(out, func(a, b [3]int64) int { return int(a[0] - b[0]) })
	return out
}

// truthKnee applies docs/report.md's rule to the truth's levels: the last
// level before the first whose Wilson 95% upper bound is under the
// objective; nil when none is.
func truthKnee(levels [][3]int64, objective float64) *int64 {
	const z = 1.959963984540054
	for i, l := range levels {
		n, p := float64(l[1]), float64(l[2])/float64(l[1])
		upper := (p + z*z/(2*n) + z*math.Sqrt(p*(1-p)/n+z*z/(4*n*n))) / (1 + z*z/n)
		if upper >= objective {
			continue
		}
		if i == 0 {
			return nil
		}
		k := levels[i-1][0]
		return &k
	}
	return nil
}
