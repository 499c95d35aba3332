// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	llmsloprocessor "github.com/llmslo/llmslo"
	"github.com/llmslo/llmslo/tools/internal/collectorconfig"
	"github.com/llmslo/llmslo/tools/internal/dashboard"
	"github.com/llmslo/llmslo/tools/internal/loadgen"
	"github.com/llmslo/llmslo/tools/internal/slorules"
)

// sloCollectorConfig is the collector of the SLO test: the objective of 97%
// sits beside the thresholds, as users write it.
const sloCollectorConfig = `
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
        objective: 97
  batch:
    timeout: 200ms
connectors:
  llm_slo:
    metrics_flush_interval: 1s
exporters:
  prometheus:
    endpoint: %s
service:
  pipelines:
    traces:
      receivers: [otlp]
      processors: [llm_slo, batch]
      exporters: [llm_slo]
    metrics:
      receivers: [llm_slo]
      exporters: [prometheus]
  telemetry:
    metrics:
      level: none
`

// windowDivisor scales the production windows for the test: the 1h/5m page
// reads 1m/5s, the 6h/30m one 6m/30s.
const windowDivisor = 60

type replicaAddr struct{ otlp, metrics string }

// TestSLOTwoReplicas: two collector replicas fed by the load generator,
// one Prometheus scraping both with the rules of `llmslo rules` loaded
// (windows divided by 60):
//   - the recorded 5m SLI equals 1 - goodput of the generator's ground
//     truth, over requests split across the replicas (exactly when both
//     replicas' scrapes sit at whole intervals in the window);
//   - an incident (one model's TTFT x20) drives the page alert to firing;
//   - every query of `llmslo dashboard` returns data;
//   - after an idle minute in the middle (the 5m SLI is 0/0 then), the
//     period error ratio and the budget remaining stay numbers, equal to
//     bad/total of everything the generator sent.
func TestSLOTwoReplicas(t *testing.T) {
	var replicas []replicaAddr
	var cfgPath string
	for range 2 {
		r := replicaAddr{otlp: fmt.Sprintf("127.0.0.1:%d", freePort(t)), metrics: fmt.Sprintf("127.0.0.1:%d", freePort(t))}
		port, _ := strconv.Atoi(strings.Split(r.otlp, ":")[1])
		cfg := fmt.Sprintf(sloCollectorConfig, port, r.metrics)
		startCollector(t, cfg)
		cfgPath = filepath.Join(t.TempDir(), "collector.yaml")
		require.NoError(t, os.WriteFile(cfgPath, []byte(cfg), 0o600))
		replicas = append(replicas, r)
	}
	procs, err := collectorconfig.Load[*llmsloprocessor.Config](context.Background(), cfgPath, llmsloprocessor.NewFactory())
	require.NoError(t, err)
	var in []slorules.Processor
	for _, p := range procs {
		in = append(in, slorules.NewProcessor(p.ID.String(), p.Config))
	}
	slos, err := slorules.FromProcessors(in)
	require.NoError(t, err)
	opts := slorules.Options{WindowDivisor: windowDivisor}
	var rules bytes.Buffer
	require.NoError(t, slorules.Write(&rules, "prometheus", cfgPath, slos, opts))
	ruleFile := filepath.Join(t.TempDir(), "rules.yaml")
	require.NoError(t, os.WriteFile(ruleFile, rules.Bytes(), 0o600))
	prom := startPrometheusWith(t, []string{replicas[0].metrics, replicas[1].metrics}, ruleFile)
	require.Eventually(t, func() bool {
		resp, err := http.Get(prom + "/-/ready")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 30*time.Second, 200*time.Millisecond, "Prometheus never got ready")

	// The incident first: the exactness batches burn the budget too and
	// would page before it.
	sent := warmUp(t, prom, replicas)
	t.Run("incident pages", func(t *testing.T) { sent = append(sent, incidentPages(t, prom, replicas, slos)...) })
	t.Run("idle minute", func(t *testing.T) { idleMinute(t, prom, len(sent)) })
	t.Run("SLI exact", func(t *testing.T) { sent = append(sent, sliExact(t, prom, replicas, len(sent))...) })
	t.Run("budget after the idle minute", func(t *testing.T) { budgetAfterIdle(t, prom, sent) })
}

// warmUp creates every series the test will write (three models, both
// shapes, both replicas) and fills their counters before the measured
// traffic, for two artefacts of rate() that every rate-based rule (Sloth's
// too) shares at a series' birth and vanish over a production period:
// what a series counted before its first scrape is its baseline, never
// seen; and while a counter is small beside its increase in a window,
// rate() extrapolates that window's start only to where the counter would
// reach zero, so a burst on a young series (the exactness batches' third
// model) weighs less than the same burst on an old one. Sent at once, the
// warm-up lands in the series' first samples, so budgetAfterIdle leaves it
// out of the truth exactly, and every later burst meets a full counter.
func warmUp(t *testing.T, prom string, replicas []replicaAddr) []loadgen.Truth {
	sent := split(t, replicas, loadgen.Config{Rate: 50, Seed: 5, Fast: true, Count: 600, ModelAttr: true,
		Models: map[string]float64{"llama-3.1-8b-instruct": 1, "qwen2.5-1.5b-instruct": 1, "llama-3.1-70b-instruct": 1},
		Shapes: map[loadgen.Shape]float64{loadgen.ShapeVLLM: 1, loadgen.ShapeChunks: 1}})
	waitTotal(t, prom, len(sent))
	return sent
}

// sloSelector picks the SLO's recorded series of any window.
const sloSelector = `{sloth_id="llmslo-interactive", sloth_service="llmslo", sloth_slo="interactive"}`

// idleMinute sends nothing for longer than a minute: the 5m SLI (a 5s
// window here) becomes 0/0, while the period ratio, a ratio of summed
// event rates in which an idle window adds 0 to both sides, stays a number.
// A mean of the 5m ratios (Sloth's shape) goes NaN for the whole period.
func idleMinute(t *testing.T, prom string, sent int) {
	waitTotal(t, prom, sent)
	time.Sleep(65 * time.Second)
	sli, ok := query(t, prom, "slo:sli_error:ratio_rate5m"+sliSelector)
	require.True(t, ok)
	assert.True(t, math.IsNaN(sli), "an idle 5m window is 0/0: got %v", sli)
	period, ok := query(t, prom, "slo:sli_error:ratio_rate30d"+sloSelector)
	require.True(t, ok)
	assert.False(t, math.IsNaN(period), "the period ratio went NaN over an idle minute")
	mean, _ := query(t, prom, "sum_over_time(slo:sli_error:ratio_rate5m"+sliSelector+"[12h]) / count_over_time(slo:sli_error:ratio_rate5m"+sliSelector+"[12h])")
	t.Logf("after the idle minute: 5m SLI %v, period error ratio %.4f; a mean of the 5m ratios (Sloth's shape) would read %v", sli, period, mean)
}

// budgetAfterIdle compares the period figures, read once the last batch is
// in, with the generator's truth over every request sent, across the idle
// minute: ratio = bad/total, remaining = 1 - ratio/budget. The truth the
// rules can reach leaves out each series' first sample (see warmUp).
func budgetAfterIdle(t *testing.T, prom string, sent []loadgen.Truth) {
	waitTotal(t, prom, len(sent))
	time.Sleep(8 * time.Second) // past the 5s window of the last increase
	const counters = `{llm_slo_name="interactive"}[12h]`
	unseenTotal, ok := query(t, prom, "sum(min_over_time(llm_slo_requests_total"+counters+"))")
	require.True(t, ok)
	unseenMet, ok := query(t, prom, "sum(min_over_time(llm_slo_requests_met_total"+counters+"))")
	require.True(t, ok)
	bad := float64(len(sent) - goodOf(sent))
	truth := (bad - (unseenTotal - unseenMet)) / (float64(len(sent)) - unseenTotal)
	period, ok := query(t, prom, "slo:sli_error:ratio_rate30d"+sloSelector)
	require.True(t, ok)
	remaining, ok := query(t, prom, "slo:period_error_budget_remaining:ratio"+sloSelector)
	require.True(t, ok)
	wantRemaining := 1 - truth/0.03
	t.Logf("%d requests, %.0f bad; at their series' first scrape %.0f requests, %.0f of them bad, which rate() cannot see", len(sent), bad, unseenTotal, unseenTotal-unseenMet)
	t.Logf("period error ratio %.5f, truth %.5f (diff %.1e); budget remaining %.4f, truth %.4f",
		period, truth, period-truth, remaining, wantRemaining)
	// rate() extrapolates each 5s window from its own scrape times
	// (sliExact): a scrape a millisecond late moves a window by ~1 ms / 5 s.
	assert.InDelta(t, truth, period, 2e-3, "period error ratio")
	assert.InDelta(t, wantRemaining, remaining, 2e-3/0.03, "budget remaining")
}

// split runs the generator against both replicas at once, each with its
// own seed and model mix, and returns every request's truth.
func split(t *testing.T, replicas []replicaAddr, base loadgen.Config) []loadgen.Truth {
	var (
		mu  sync.Mutex
		all []loadgen.Truth
		wg  sync.WaitGroup
	)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for i, r := range replicas {
		cfg := base
		cfg.Endpoint, cfg.Seed = r.otlp, base.Seed+uint64(i)*101
		wg.Add(1)
		go func() {
			defer wg.Done()
			truths, err := loadgen.Run(ctx, cfg)
			assert.NoError(t, err)
			mu.Lock()
			all = append(all, truths...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return all
}

var interactive = loadgen.SLO{TTFT: 500 * time.Millisecond, TPOT: 15 * time.Millisecond, E2E: 2 * time.Second}

func goodOf(truths []loadgen.Truth) int {
	good := 0
	for i := range truths {
		if interactive.Good(&truths[i]) {
			good++
		}
	}
	return good
}

const sliSelector = `{sloth_id="llmslo-interactive", sloth_service="llmslo", sloth_slo="interactive", sloth_window="5m"}`

// sliExact: the same requests are sent twice (same seeds): the first time
// creates every series (a counter's first sample is its baseline for
// rate()), the second is measured. At each rule evaluation whose 5s window
// holds exactly the second batch, the recorded slo:sli_error:ratio_rate5m
// must equal 1 - good/requests of the generator's ground truth.
func sliExact(t *testing.T, prom string, replicas []replicaAddr, before int) []loadgen.Truth {
	base := loadgen.Config{Rate: 50, Seed: 11, Fast: true, Count: 600, ModelAttr: true,
		Models: map[string]float64{"llama-3.1-8b-instruct": 2, "qwen2.5-1.5b-instruct": 1, "llama-3.1-70b-instruct": 1},
		Shapes: map[loadgen.Shape]float64{loadgen.ShapeVLLM: 1, loadgen.ShapeChunks: 1}}
	if before > 0 {
		waitTotal(t, prom, before) // the earlier traffic is all in
	}
	first := split(t, replicas, base)
	waitTotal(t, prom, before+len(first))
	time.Sleep(8 * time.Second) // counters flat for longer than the 5s window
	truths := split(t, replicas, base)
	n, good := len(truths), goodOf(truths)
	require.Equal(t, len(first), n)
	require.Equal(t, goodOf(first), good, "the same seeds give the same requests")
	waitTotal(t, prom, before+2*n)
	time.Sleep(8 * time.Second)

	want := 1 - float64(good)/float64(n)
	samples := rangeSamples(t, prom, "slo:sli_error:ratio_rate5m"+sliSelector+"[30s]")
	expr := recordingRule(t, prom, "slo:sli_error:ratio_rate5m", "interactive")
	var diffs []float64
	for _, s := range samples {
		total := increaseIn(t, prom, `llm_slo_requests_total{llm_slo_name="interactive"}[5s]`, s.t)
		met := increaseIn(t, prom, `llm_slo_requests_met_total{llm_slo_name="interactive"}[5s]`, s.t)
		if total != float64(n) || met != float64(good) {
			continue // the window holds part of the batch, or none
		}
		// A scrape stamped before the rule's evaluation may be appended
		// after it: the rule then saw one replica's window without its last
		// sample. Such an evaluation differs from its own expression run
		// now, at its time, on every sample.
		if again := valueAt(t, prom, expr, s.t); again != s.v {
			t.Logf("at %.3f the rule ran before a scrape was in (recorded %.15f, %.15f on every sample): not counted", s.t, s.v, again)
			continue
		}
		diffs = append(diffs, math.Abs(s.v-want))
		t.Logf("at %.3f the 5m SLI (5s window) over %d requests on 2 replicas: recorded %.15f, truth 1 - %d/%d = %.15f, diff %.1e",
			s.t, n, s.v, good, n, want, s.v-want)
	}
	require.NotEmpty(t, diffs, "no evaluation saw the whole batch: %v", samples)
	// rate() extrapolates each series to the window's edges from its own
	// scrape times: when both replicas' samples sit at whole scrape
	// intervals the factors are equal and the ratio is exact; a scrape a
	// millisecond late skews one replica's factor by about 1 ms / 5 s, which
	// the 5m windows of production shrink 60 times.
	assert.LessOrEqual(t, slices.Min(diffs), 1e-12, "no evaluation was exact")
	assert.LessOrEqual(t, slices.Max(diffs), 1e-3, "an evaluation strayed beyond scrape jitter")
	return append(first, truths...)
}

func waitTotal(t *testing.T, prom string, n int) {
	require.Eventually(t, func() bool {
		v, ok := query(t, prom, `sum(llm_slo_requests_total{llm_slo_name="interactive"})`)
		return ok && v == float64(n)
	}, 90*time.Second, 500*time.Millisecond, "Prometheus never saw %d requests", n)
}

type sample struct{ t, v float64 }

// apiQuery runs an instant query (at time at, if not 0) and returns the
// result's raw JSON.
func apiQuery(t *testing.T, prom, q string, at float64) json.RawMessage {
	u := prom + "/api/v1/query?query=" + url.QueryEscape(q)
	if at != 0 {
		u += "&time=" + strconv.FormatFloat(at, 'f', 3, 64)
	}
	resp, err := http.Get(u)
	require.NoError(t, err)
	defer resp.Body.Close()
	var body struct {
		Status string
		Error  string
		Data   struct{ Result json.RawMessage }
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	require.Equal(t, "success", body.Status, "%s: %s", q, body.Error)
	return body.Data.Result
}

func parseValues(t *testing.T, raw [][]any) []sample {
	var out []sample
	for _, p := range raw {
		v, err := strconv.ParseFloat(p[1].(string), 64)
		require.NoError(t, err)
		out = append(out, sample{p[0].(float64), v})
	}
	return out
}

// recordingRule is the expression of the recording rule record of SLO slo
// (its 5m window), as Prometheus loaded it.
func recordingRule(t *testing.T, prom, record, slo string) string {
	resp, err := http.Get(prom + "/api/v1/rules?type=record")
	require.NoError(t, err)
	defer resp.Body.Close()
	var body struct {
		Data struct {
			Groups []struct {
				Rules []struct {
					Name   string
					Query  string
					Labels map[string]string
				}
			}
		}
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	for _, g := range body.Data.Groups {
		for _, r := range g.Rules {
			if r.Name == record && r.Labels["sloth_slo"] == slo {
				return r.Query
			}
		}
	}
	require.Failf(t, "no recording rule", "%s for SLO %s", record, slo)
	return ""
}

// valueAt is the one value of an instant query at time at.
func valueAt(t *testing.T, prom, q string, at float64) float64 {
	raw := apiQuery(t, prom, q, at)
	var res []struct{ Value []any }
	require.NoError(t, json.Unmarshal(raw, &res))
	require.Len(t, res, 1, q)
	v, err := strconv.ParseFloat(res[0].Value[1].(string), 64)
	require.NoError(t, err)
	return v
}

// rangeSamples returns the raw samples of a range-vector query's one series.
func rangeSamples(t *testing.T, prom, q string) []sample {
	raw := apiQuery(t, prom, q, 0)
	var res []struct{ Values [][]any }
	require.NoError(t, json.Unmarshal(raw, &res))
	require.Len(t, res, 1, q)
	return parseValues(t, res[0].Values)
}

// increaseIn adds, over every series of a range selector at time at, the
// last sample minus the first: what rate() sees rise, unextrapolated.
func increaseIn(t *testing.T, prom, q string, at float64) float64 {
	raw := apiQuery(t, prom, q, at)
	var res []struct{ Values [][]any }
	require.NoError(t, json.Unmarshal(raw, &res))
	sum := 0.0
	for _, r := range res {
		s := parseValues(t, r.Values)
		sum += s[len(s)-1].v - s[0].v
	}
	return sum
}

// incidentPages: real-time traffic on both replicas; 20 s in, the
// majority model's TTFT is multiplied by 20 (from ~40 ms to ~800 ms, over
// the 500 ms bound). The page alert must reach firing; then every query of
// the dashboard returns data. It returns the requests sent.
func incidentPages(t *testing.T, prom string, replicas []replicaAddr, slos []slorules.SLO) []loadgen.Truth {
	const incidentAt = 20 * time.Second
	base := loadgen.Config{Rate: 10, Duration: 100 * time.Second, Seed: 23, ModelAttr: true,
		Models:   map[string]float64{"llama-3.1-8b-instruct": 1, "qwen2.5-1.5b-instruct": 3},
		Shapes:   map[loadgen.Shape]float64{loadgen.ShapeVLLM: 1, loadgen.ShapeChunks: 1},
		Incident: &loadgen.Incident{Model: "qwen2.5-1.5b-instruct", After: incidentAt, Factor: 20}}
	start := time.Now()
	done := make(chan []loadgen.Truth, 1)
	go func() { done <- split(t, replicas, base) }()

	var firedAfter time.Duration
	require.Eventually(t, func() bool {
		if page := alertState(prom, "page"); page == "firing" {
			firedAfter = time.Since(start) - incidentAt
			return true
		}
		return false
	}, 100*time.Second, 500*time.Millisecond, "the page alert never fired")
	require.Positive(t, firedAfter, "the page fired before the incident")
	t.Logf("page firing %.1fs after the incident began (windows at 1/60 of production: 1h/5m read 1m/5s, 6h/30m read 6m/30s; with under two minutes of history the long windows hold little healthy traffic)", firedAfter.Seconds())

	t.Run("dashboard queries return data", func(t *testing.T) { dashboardData(t, prom, slos) })
	truths := <-done
	t.Logf("incident run: %d requests, goodput %.3f", len(truths), float64(goodOf(truths))/float64(len(truths)))
	return truths
}

// alertState is the state of LLMSLOErrorBudgetBurn of severity in
// /api/v1/alerts ("" when absent).
func alertState(prom, severity string) string {
	resp, err := http.Get(prom + "/api/v1/alerts")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	var body struct {
		Data struct {
			Alerts []struct {
				Labels map[string]string
				State  string
			}
		}
	}
	if json.NewDecoder(resp.Body).Decode(&body) != nil {
		return ""
	}
	for _, a := range body.Data.Alerts {
		if a.Labels["alertname"] == slorules.AlertName && a.Labels["severity"] == severity && a.Labels["llm_slo_name"] == "interactive" {
			return a.State
		}
	}
	return ""
}

// dashboardData evaluates every target of the dashboard, the variables set
// to All and $__rate_interval to 30s, and requires a non-empty result.
func dashboardData(t *testing.T, prom string, slos []slorules.SLO) {
	d, err := dashboard.Build(slos, dashboard.Options{})
	require.NoError(t, err)
	raw, err := json.Marshal(d)
	require.NoError(t, err)
	var parsed struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	require.NoError(t, json.Unmarshal(raw, &parsed))
	vars := strings.NewReplacer("$slo", ".*", "$model", ".*", "$layer", ".*", "$__rate_interval", "30s")
	count := 0
	for _, p := range parsed.Panels {
		for _, x := range p.Targets {
			q := vars.Replace(x.Expr)
			res := apiQuery(t, prom, q, 0)
			var series []struct{ Value []any }
			require.NoError(t, json.Unmarshal(res, &series))
			assert.NotEmpty(t, series, "%s: %s", p.Title, q)
			for _, s := range series {
				if v, err := strconv.ParseFloat(s.Value[1].(string), 64); err == nil && math.IsNaN(v) {
					t.Logf("%s: %s: NaN in a series", p.Title, q)
				}
			}
			count++
		}
	}
	t.Logf("%d dashboard queries, every one returned data", count)
}
