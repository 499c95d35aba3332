// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/llmslo/llmslo/internal/otlpio"
	"github.com/llmslo/llmslo/tools/internal/loadgen"
	"github.com/llmslo/llmslo/tools/internal/termtext"
)

// The SLOs of config/demo.yaml, in table order.
var (
	sloNames = []string{"interactive", "batch"}
	slos     = map[string]loadgen.SLO{
		"interactive": {TTFT: 500 * time.Millisecond, TPOT: 15 * time.Millisecond, E2E: 2 * time.Second},
		"batch":       {E2E: 30 * time.Second},
	}
)

// liveOptions are the flags of the live comparison (-listen).
type liveOptions struct {
	listen         string
	refresh, flush time.Duration
	width          int
}

// liveIncident checks the incident for the live comparison. Its spans are
// engine and client spans of separate requests unless -shapes has joined,
// so a network incident, which shows only on a client span joined to its
// engine span, is refused without it; an incident on a model the run does
// not send would show nothing.
func liveIncident(cfg loadgen.Config) error {
	inc := cfg.Incident
	if inc == nil {
		return nil
	}
	if inc.Kind == loadgen.IncidentNetwork && cfg.Shapes[loadgen.ShapeJoined] == 0 {
		return errors.New("-incident-kind network needs client spans joined to their engine spans (trace assembly): add joined to -shapes (the end-to-end test TestAttributionEndToEnd checks it)")
	}
	if cfg.Models[inc.Model] == 0 {
		return fmt.Errorf("-incident-model %q: -models sends %v", inc.Model, sortedKeys(cfg.Models))
	}
	return nil
}

// live runs the generator and prints, every opt.refresh while requests
// arrive, what the collector's llm_slo connector reports (received over
// OTLP/HTTP on opt.listen) beside the ground truth, then the final table
// after the connector's last flush.
func live(ctx context.Context, cfg loadgen.Config, opt liveOptions, out io.Writer) error {
	if cfg.Fast {
		return errors.New("-listen compares live metrics with the truth as requests arrive; -fast sends them all at once")
	}
	if err := liveIncident(cfg); err != nil {
		return err
	}
	recv, err := otlpio.NewReceiver(opt.listen)
	if err != nil {
		return err
	}
	defer recv.Close()

	var mu sync.Mutex
	var truths []loadgen.Truth
	cfg.OnTruth = func(t loadgen.Truth) { mu.Lock(); truths = append(truths, t); mu.Unlock() }
	start := time.Now()
	done := make(chan error, 1)
	go func() { _, err := loadgen.Run(ctx, cfg); done <- err }()
	load := fmt.Sprintf("~%.0f requests/s", cfg.Rate)
	if cfg.Ramp != nil {
		load = fmt.Sprintf("from %g to %g requests/s", cfg.Ramp.From, cfg.Ramp.To)
	}
	fmt.Fprintln(out, termtext.Wrap(fmt.Sprintf("sending %s for %s to %s (models %v; shapes %v)",
		load, cfg.Duration, cfg.Endpoint, sortedKeys(cfg.Models), sortedKeys(cfg.Shapes)), opt.width, "  "))
	if inc := cfg.Incident; inc != nil {
		fmt.Fprintln(out, termtext.Wrap(fmt.Sprintf("incident %s in %s's requests from %s on: the report's \"Why SLO interactive misses\" should name %s",
			inc.Kind, inc.Model, inc.After, inc.Kind.Cause()), opt.width, "  "))
	}
	show := func(elapsed time.Duration, final bool) {
		mu.Lock()
		ts := append([]loadgen.Truth(nil), truths...)
		mu.Unlock()
		printTable(out, latest(recv), ts, elapsed, final, opt.width)
	}
	tick := time.NewTicker(opt.refresh)
	defer tick.Stop()
	// The spans of the last requests pass the collector before the
	// connector's next flush: wait for it before the final table.
	settle := func() { time.Sleep(opt.flush + 2*time.Second) }
	return refreshLoop(done, tick.C, start, cfg.Duration, settle, show)
}

// refreshLoop shows a live table on every tick while requests arrive and
// the final one when the generator is done. A tick after the arrivals
// ended (the generator still waits for the last requests) shows nothing:
// its table would repeat the last one under the same elapsed time.
func refreshLoop(done <-chan error, ticks <-chan time.Time, start time.Time, duration time.Duration,
	settle func(), show func(elapsed time.Duration, final bool)) error {
	for {
		select {
		case err := <-done:
			if err != nil {
				return err
			}
			settle()
			show(min(time.Since(start), duration), true)
			return nil
		case now := <-ticks:
			if elapsed := now.Sub(start); elapsed < duration {
				show(elapsed, false)
			}
		}
	}
}

func sortedKeys[K ~string](m map[K]float64) []string {
	var k []string
	for n := range m {
		k = append(k, string(n))
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
