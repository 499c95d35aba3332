// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

// Command llmslo-demo drives a running collector with the load generator
// and prints, every few seconds, what the collector's llm_slo connector
// reports (received over OTLP/HTTP) beside the generator's ground truth.
// It is the second half of `make run`.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/llmslo/llmslo/internal/loadgen"
	"github.com/llmslo/llmslo/internal/otlpio"
	"github.com/llmslo/llmslo/internal/termtext"
)

func main() {
	endpoint := flag.String("endpoint", "127.0.0.1:4317", "collector OTLP/gRPC endpoint")
	listen := flag.String("listen", "127.0.0.1:4319", "where the collector exports metrics over OTLP/HTTP")
	duration := flag.Duration("duration", 30*time.Second, "how long requests keep arriving")
	rate := flag.Float64("rate", 20, "requests per second")
	rampFlag := flag.String("ramp", "", "FROM:TO: the rate rises linearly from FROM to TO requests per second over -duration, replacing -rate (e.g. 5:60)")
	refresh := flag.Duration("refresh", 5*time.Second, "table refresh interval")
	seed := flag.Uint64("seed", 1, "random seed")
	flush := flag.Duration("flush", 2*time.Second, "the connector's metrics_flush_interval (to wait for the last flush)")
	width := flag.Int("width", 0, "terminal width: tables wider than this switch to a narrower layout (0: unlimited)")
	var incidentFlags loadgen.IncidentFlags
	incidentFlags.Register(flag.CommandLine)
	flag.Parse()
	incident, err := demoIncident(&incidentFlags, flag.CommandLine)
	if err != nil {
		fmt.Fprintln(os.Stderr, "llmslo-demo:", err)
		os.Exit(2)
	}
	var ramp *loadgen.Ramp
	if *rampFlag != "" {
		if ramp, err = loadgen.ParseRamp(*rampFlag); err != nil {
			fmt.Fprintln(os.Stderr, "llmslo-demo: -ramp:", err)
			os.Exit(2)
		}
	}
	if err := run(*endpoint, *listen, *duration, *rate, ramp, *refresh, *seed, *flush, *width, incident, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "llmslo-demo:", err)
		os.Exit(1)
	}
}

// The SLOs of config/demo.yaml, in table order.
var (
	sloNames = []string{"interactive", "batch"}
	slos     = map[string]loadgen.SLO{
		"interactive": {TTFT: 500 * time.Millisecond, TPOT: 15 * time.Millisecond, E2E: 2 * time.Second},
		"batch":       {E2E: 30 * time.Second},
	}
)

// demoIncident is the incident the flags ask for. The demo's spans are
// engine and client spans of separate requests, so a network incident,
// which shows only on a client span joined to its engine span, is refused
// with where to see it.
func demoIncident(f *loadgen.IncidentFlags, fs *flag.FlagSet) (*loadgen.Incident, error) {
	inc, err := f.Incident(fs)
	if err != nil || inc == nil {
		return inc, err
	}
	if inc.Kind == loadgen.IncidentNetwork {
		return nil, errors.New("-incident-kind network needs client spans joined to their engine spans (trace assembly), which the demo does not send: llmloadgen -shapes joined=1 drives it, and the end-to-end test TestAttributionEndToEnd checks it")
	}
	if _, ok := demoModels[inc.Model]; !ok {
		return nil, fmt.Errorf("-incident-model %q: the demo sends %v", inc.Model, sortedKeys(demoModels))
	}
	return inc, nil
}

// demoModels are the models the demo sends, by weight.
var demoModels = map[string]float64{"llama-3.1-8b-instruct": 3, "llama-3.1-70b-instruct": 1, "qwen2.5-1.5b-instruct": 2}

func run(endpoint, listen string, duration time.Duration, rate float64, ramp *loadgen.Ramp, refresh time.Duration, seed uint64, flush time.Duration, width int,
	incident *loadgen.Incident, out io.Writer) error {
	recv, err := otlpio.NewReceiver(listen)
	if err != nil {
		return err
	}
	defer recv.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	var mu sync.Mutex
	var truths []loadgen.Truth
	models := demoModels
	cfg := loadgen.Config{Endpoint: endpoint, Rate: rate, Duration: duration, Seed: seed, Models: models, ModelAttr: true, Incident: incident, Ramp: ramp,
		Shapes:  map[loadgen.Shape]float64{loadgen.ShapeVLLM: 1, loadgen.ShapeChunks: 1, loadgen.ShapeSemconv: 1},
		OnTruth: func(t loadgen.Truth) { mu.Lock(); truths = append(truths, t); mu.Unlock() }}
	start := time.Now()
	done := make(chan error, 1)
	go func() { _, err := loadgen.Run(ctx, cfg); done <- err }()
	load := fmt.Sprintf("~%.0f requests/s", rate)
	if ramp != nil {
		load = fmt.Sprintf("from %g to %g requests/s", ramp.From, ramp.To)
	}
	fmt.Fprintln(out, termtext.Wrap(fmt.Sprintf("sending %s for %s to %s (models %v; vLLM, chunk-event and semconv spans)", load, duration, endpoint, sortedKeys(models)), width, "  "))
	if incident != nil {
		fmt.Fprintln(out, termtext.Wrap(fmt.Sprintf("incident %s in %s's requests from %s on: the report's \"Why SLO interactive misses\" should name %s",
			incident.Kind, incident.Model, incident.After, incident.Kind.Cause()), width, "  "))
	}

	show := func(final bool) {
		mu.Lock()
		ts := append([]loadgen.Truth(nil), truths...)
		mu.Unlock()
		elapsed := min(time.Since(start), duration)
		printTable(out, latest(recv), ts, elapsed, final, width)
	}
	tick := time.NewTicker(refresh)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				return err
			}
			// Wait for the spans to pass the collector and the connector's
			// next flush.
			time.Sleep(flush + 2*time.Second)
			show(true)
			return nil
		case <-tick.C:
			show(false)
		}
	}
}

func sortedKeys(m map[string]float64) []string {
	var k []string
	for n := range m {
		k = append(k, n)
	}
	sort.Strings(k)
	return k
}

// latest returns the newest metrics batch (cumulative: it holds every series).
func latest(r *otlpio.Receiver) pmetric.Metrics {
	all := r.Metrics()
	if len(all) == 0 {
		return pmetric.NewMetrics()
	}
	return all[len(all)-1]
}

type key struct{ model, service, layer string }

type collected struct {
	requests, met map[string]float64            // by SLO
	q             map[string]map[string]float64 // window metric -> quantile -> value
}

func collect(md pmetric.Metrics) map[key]*collected {
	out := map[key]*collected{}
	get := func(k key) *collected {
		if out[k] == nil {
			out[k] = &collected{requests: map[string]float64{}, met: map[string]float64{}, q: map[string]map[string]float64{}}
		}
		return out[k]
	}
	for _, rm := range md.ResourceMetrics().All() {
		svc := str(rm.Resource().Attributes(), "service.name")
		for _, sm := range rm.ScopeMetrics().All() {
			for _, m := range sm.Metrics().All() {
				var dps pmetric.NumberDataPointSlice
				switch m.Type() {
				case pmetric.MetricTypeSum:
					dps = m.Sum().DataPoints()
				case pmetric.MetricTypeGauge:
					dps = m.Gauge().DataPoints()
				default:
					continue
				}
				for _, dp := range dps.All() {
					a := dp.Attributes()
					k := key{str(a, "gen_ai.request.model"), svc, str(a, "llm.layer")}
					name := str(a, "llm.slo.name")
					switch {
					case m.Name() == "llm.slo.requests":
						get(k).requests[name] += float64(dp.IntValue())
					case m.Name() == "llm.slo.requests.met":
						get(k).met[name] += float64(dp.IntValue())
					case strings.HasSuffix(m.Name(), ".window"):
						c := get(k)
						if c.q[m.Name()] == nil {
							c.q[m.Name()] = map[string]float64{}
						}
						c.q[m.Name()][str(a, "quantile")] = dp.DoubleValue()
					}
				}
			}
		}
	}
	return out
}

func str(a pcommon.Map, k string) string {
	if v, ok := a.Get(k); ok {
		return v.AsString()
	}
	return ""
}
