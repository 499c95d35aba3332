// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/llmslo/llmslo/internal/benchspans"
	"github.com/llmslo/llmslo/internal/otlpio"
)

// TestPeerAgrees checks that the peer's signal_to_metrics configuration
// (bench/peer/signal_to_metrics.yaml) computes what the llm_slo pair
// computes on the same vLLM engine spans, so that the load benchmark
// compares two pipelines doing the same attribute-only work: per model, the
// count and sum of TTFT, E2E and TPOT, and the requests that met TTFT ∧ TPOT
// ∧ E2E. The spans' values straddle every threshold, and some have one
// output token (TPOT does not apply: TTFT and E2E decide). It runs when both
// distributions are built (make bench builds them).
func TestPeerAgrees(t *testing.T) {
	for _, n := range []string{"with_llmslo", "peer_signal_to_metrics"} {
		if _, err := os.Stat(armByName(t, n).binary(t)); err != nil {
			t.Skipf("needs both distributions (make dist, bench/peer/build.sh): %v", err)
		}
	}
	td, want := agreementSpans(600)
	body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	require.NoError(t, err)
	names := map[string][2]string{ // what: llm_slo's metric, the peer's
		"ttft": {"gen_ai.server.time_to_first_token", "llm.engine.ttft"},
		"e2e":  {"llm.e2e", "llm.engine.e2e"},
		"tpot": {"gen_ai.server.time_per_output_token", "llm.engine.tpot"},
		"good": {"llm.slo.requests.met", "llm.engine.good"},
	}
	got := [2]map[string]float64{}
	for i, n := range []string{"with_llmslo", "peer_signal_to_metrics"} {
		got[i] = collectMetrics(t, armByName(t, n), body, len(want.models)*4)
	}
	for what, pair := range names {
		for _, model := range want.models {
			for _, stat := range []string{"count", "sum"} {
				if what == "good" && stat == "sum" {
					continue
				}
				l, p, w := got[0][key(pair[0], model, stat)], got[1][key(pair[1], model, stat)], want.of(what, model, stat)
				assert.InDeltaf(t, w, l, 1e-9*w, "%s %s of %s: llm_slo %v, expected %v", what, stat, model, l, w)
				assert.InDeltaf(t, w, p, 1e-9*w, "%s %s of %s: signal_to_metrics %v, expected %v", what, stat, model, p, w)
			}
		}
	}
	for _, model := range want.models {
		t.Logf("%s: both find %.0f of %.0f requests good", model, want.of("good", model, "count"), want.of("ttft", model, "count"))
	}
}

// expectation is what both pipelines must compute: count and sum per
// metric and model.
type expectation struct {
	models []string
	byKey  map[string]float64
}

func (e expectation) of(what, model, stat string) float64 { return e.byKey[key(what, model, stat)] }

func key(metric, model, stat string) string { return metric + "|" + model + "|" + stat }

// agreementSpans makes n vLLM engine spans over three models whose TTFT,
// TPOT and E2E fall on both sides of the benchmark SLO (500 ms, 15 ms,
// 2 s), and what the two pipelines must find in them.
func agreementSpans(n int) (ptrace.Traces, expectation) {
	rng := rand.New(rand.NewPCG(26, 7))
	want := expectation{models: []string{"model-0", "model-1", "model-2"}, byKey: map[string]float64{}}
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "vllm")
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	for i := range n {
		sp := spans.AppendEmpty()
		sp.SetTraceID(pcommon.TraceID{byte(i), byte(i >> 8), 26})
		sp.SetSpanID(pcommon.SpanID{byte(i), byte(i >> 8), 26})
		model := want.models[i%3]
		benchspans.Engine(sp, fmt.Sprintf("req-%d", i), model)
		tokens := 1 + rng.IntN(200)
		if i%10 == 0 {
			tokens = 1
		}
		ttft := 0.05 + rng.Float64()*0.8
		tpot := 0.002 + rng.Float64()*0.025
		e2e := ttft + tpot*float64(tokens-1)
		a := sp.Attributes()
		a.PutInt("gen_ai.usage.completion_tokens", int64(tokens))
		a.PutDouble("gen_ai.latency.time_to_first_token", ttft)
		a.PutDouble("gen_ai.latency.e2e", e2e)
		sp.SetEndTimestamp(sp.StartTimestamp() + pcommon.Timestamp(e2e*1e9))
		add := func(what string, v float64) {
			want.byKey[key(what, model, "count")]++
			want.byKey[key(what, model, "sum")] += v
		}
		add("ttft", ttft)
		add("e2e", e2e)
		if tokens > 1 {
			tpot = (e2e - ttft) / float64(tokens-1)
			add("tpot", tpot)
		}
		// TPOT does not apply to one output token: TTFT and E2E decide.
		if ttft <= 0.5 && e2e <= 2 && (tokens < 2 || tpot <= 0.015) {
			want.byKey[key("good", model, "count")]++
		}
	}
	return td, want
}

// collectMetrics runs the arm's collector with its metrics sent over
// OTLP/HTTP to a receiver of the test's, posts body, and returns per metric,
// model and "count"/"sum" what the collector reported (cumulative series
// read at their last point, delta points added up), once at least minSeries
// series have been seen and the collector has shut down, flushing.
func collectMetrics(t *testing.T, a arm, body []byte, minSeries int) map[string]float64 {
	rcv, err := otlpio.NewReceiver("127.0.0.1:0")
	require.NoError(t, err)
	defer rcv.Close()
	a.metricsExporter = "http://" + rcv.Addr()
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(a.config(t, addr, freePort(t), fmt.Sprintf("127.0.0.1:%d", freePort(t)))), 0o600))
	cmd := exec.Command(a.binary(t), "--config", cfg)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	client := &http.Client{Timeout: 10 * time.Second}
	waitReady(t, client, "http://"+addr+"/v1/traces", body[:0])
	require.NoError(t, post(client, "http://"+addr+"/v1/traces", body))
	deadline := time.Now().Add(30 * time.Second)
	for len(seriesOf(rcv.Metrics())) < minSeries && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(time.Second) // the batch processor's 200 ms and a last export
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, cmd.Wait())
	return totals(seriesOf(rcv.Metrics()))
}

// seriesPoints is one series of the metrics received, reduced to its count
// and sum.
type seriesPoints struct {
	metric, model string
	last          pcommon.Timestamp
	count, sum    float64
}

// seriesOf reduces the metrics received to their series, by metric and
// attributes.
func seriesOf(batches []pmetric.Metrics) map[string]seriesPoints {
	series := map[string]seriesPoints{}
	for _, md := range batches {
		for _, rm := range md.ResourceMetrics().All() {
			for _, sm := range rm.ScopeMetrics().All() {
				for _, m := range sm.Metrics().All() {
					for _, p := range points(m) {
						record(series, m.Name(), p)
					}
				}
			}
		}
	}
	return series
}

// point is a data point reduced to what the comparison reads.
type point struct {
	attrs      pcommon.Map
	at         pcommon.Timestamp
	delta      bool
	count, sum float64
}

func points(m pmetric.Metric) []point {
	var out []point
	switch m.Type() {
	case pmetric.MetricTypeSum:
		delta := m.Sum().AggregationTemporality() == pmetric.AggregationTemporalityDelta
		for _, dp := range m.Sum().DataPoints().All() {
			v := dp.DoubleValue()
			if dp.ValueType() == pmetric.NumberDataPointValueTypeInt {
				v = float64(dp.IntValue())
			}
			out = append(out, point{dp.Attributes(), dp.Timestamp(), delta, v, 0})
		}
	case pmetric.MetricTypeHistogram:
		delta := m.Histogram().AggregationTemporality() == pmetric.AggregationTemporalityDelta
		for _, dp := range m.Histogram().DataPoints().All() {
			out = append(out, point{dp.Attributes(), dp.Timestamp(), delta, float64(dp.Count()), dp.Sum()})
		}
	case pmetric.MetricTypeExponentialHistogram:
		delta := m.ExponentialHistogram().AggregationTemporality() == pmetric.AggregationTemporalityDelta
		for _, dp := range m.ExponentialHistogram().DataPoints().All() {
			out = append(out, point{dp.Attributes(), dp.Timestamp(), delta, float64(dp.Count()), dp.Sum()})
		}
	}
	return out
}

// record keeps a point of the server layer (llm_slo's engine series) or
// of the peer's, under the SLO the benchmark configures.
func record(series map[string]seriesPoints, metric string, p point) {
	if l, ok := p.attrs.Get("llm.layer"); ok && l.Str() != "server" {
		return
	}
	if n, ok := p.attrs.Get("llm.slo.name"); ok && n.Str() != "interactive" {
		return
	}
	model := ""
	for _, k := range []string{"gen_ai.request.model", "gen_ai.response.model"} {
		if v, ok := p.attrs.Get(k); ok {
			model = v.Str()
			break
		}
	}
	id := metric + "|" + fmt.Sprint(p.attrs.AsRaw())
	cur := series[id]
	cur.metric, cur.model = metric, model
	switch {
	case p.delta:
		cur.count += p.count
		cur.sum += p.sum
	case p.at >= cur.last:
		cur.last, cur.count, cur.sum = p.at, p.count, p.sum
	}
	series[id] = cur
}

// totals adds the series up per metric, model and statistic.
func totals(series map[string]seriesPoints) map[string]float64 {
	out := map[string]float64{}
	for _, sp := range series {
		out[key(sp.metric, sp.model, "count")] += sp.count
		out[key(sp.metric, sp.model, "sum")] += sp.sum
	}
	return out
}
