// Command llmslo-demo drives a running collector with the load generator
// and prints, every few seconds, what the collector's llm_slo connector
// reports (received over OTLP/HTTP) beside the generator's ground truth.
// It is the second half of `make run`.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/llmslo/llmslo/internal/loadgen"
	"github.com/llmslo/llmslo/internal/otlpio"
)

func main() {
	endpoint := flag.String("endpoint", "127.0.0.1:4317", "collector OTLP/gRPC endpoint")
	listen := flag.String("listen", "127.0.0.1:4319", "where the collector exports metrics over OTLP/HTTP")
	duration := flag.Duration("duration", 30*time.Second, "how long requests keep arriving")
	rate := flag.Float64("rate", 20, "requests per second")
	refresh := flag.Duration("refresh", 5*time.Second, "table refresh interval")
	seed := flag.Uint64("seed", 1, "random seed")
	flush := flag.Duration("flush", 2*time.Second, "the connector's metrics_flush_interval (to wait for the last flush)")
	flag.Parse()
	if err := run(*endpoint, *listen, *duration, *rate, *refresh, *seed, *flush, os.Stdout); err != nil {
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

func run(endpoint, listen string, duration time.Duration, rate float64, refresh time.Duration, seed uint64, flush time.Duration, out io.Writer) error {
	recv, err := otlpio.NewReceiver(listen)
	if err != nil {
		return err
	}
	defer recv.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	var mu sync.Mutex
	var truths []loadgen.Truth
	models := map[string]float64{"llama-3.1-8b-instruct": 3, "llama-3.1-70b-instruct": 1, "qwen2.5-1.5b-instruct": 2}
	cfg := loadgen.Config{Endpoint: endpoint, Rate: rate, Duration: duration, Seed: seed, Models: models, ModelAttr: true,
		Shapes:  map[loadgen.Shape]float64{loadgen.ShapeVLLM: 1, loadgen.ShapeChunks: 1, loadgen.ShapeSemconv: 1},
		OnTruth: func(t loadgen.Truth) { mu.Lock(); truths = append(truths, t); mu.Unlock() }}
	start := time.Now()
	done := make(chan error, 1)
	go func() { _, err := loadgen.Run(ctx, cfg); done <- err }()
	fmt.Fprintf(out, "sending ~%.0f requests/s for %s to %s (models %v; vLLM, chunk-event and semconv spans)\n", rate, duration, endpoint, sortedKeys(models))

	show := func(final bool) {
		mu.Lock()
		ts := append([]loadgen.Truth(nil), truths...)
		mu.Unlock()
		elapsed := min(time.Since(start), duration)
		printTable(out, latest(recv), ts, elapsed, final)
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

var quantiles = []string{"0.5", "0.9", "0.99"}

func fmtQ(c *collected, metric string) string {
	if c == nil || c.q[metric] == nil {
		return "-"
	}
	var parts []string
	for _, q := range quantiles {
		parts = append(parts, fmt.Sprintf("%.1f", 1000*c.q[metric][q]))
	}
	return strings.Join(parts, "/")
}

func fmtT(sorted []float64) string {
	if len(sorted) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f/%.1f/%.1f", 1000*loadgen.Percentile(sorted, 50), 1000*loadgen.Percentile(sorted, 90), 1000*loadgen.Percentile(sorted, 99))
}

func printTable(out io.Writer, md pmetric.Metrics, truths []loadgen.Truth, elapsed time.Duration, final bool) {
	coll := collect(md)
	// Ground truth grouped like the collector's series: model and producer.
	groups := map[key][]loadgen.Truth{}
	for _, t := range truths {
		k := key{t.Model, t.Shape.Service(), t.Layer}
		groups[k] = append(groups[k], t)
	}
	var keys []key
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		return a.model+a.service < b.model+b.service
	})
	title := "live"
	if final {
		title = "final"
	}
	fmt.Fprintf(out, "\n== %s, %s: SLO interactive = TTFT<=500ms, TPOT<=15ms, E2E<=2s; batch = E2E<=30s; percentiles p50/p90/p99 in ms over the connector's 1m window ==\n",
		title, elapsed.Round(time.Second))
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MODEL\tPRODUCER\tFROM\tREQUESTS\tTTFT\tTPOT\tITL\tE2E\tINTERACTIVE goodput, good/s\tBATCH goodput, good/s")
	worst, exact := 0.0, true
	for _, k := range keys {
		ts := groups[k]
		var truthSLO []*loadgen.Group
		for _, name := range sloNames {
			truthSLO = append(truthSLO, loadgen.Summarize(ts, slos[name])[0])
		}
		g := truthSLO[0]
		c := coll[k]
		producer := fmt.Sprintf("%s (%s)", k.service, k.layer)
		if c != nil && c.requests[sloNames[0]] > 0 {
			fmt.Fprintf(tw, "%s\t%s\tcollector\t%.0f\t%s\t%s\t%s\t%s", k.model, producer, c.requests[sloNames[0]],
				fmtQ(c, "llm.ttft.window"), fmtQ(c, "llm.tpot.window"), fmtQ(c, "llm.itl.window"), fmtQ(c, "llm.e2e.window"))
			for _, name := range sloNames {
				fmt.Fprintf(tw, "\t%.1f%%, %.2f", 100*c.met[name]/max(c.requests[name], 1), c.met[name]/elapsed.Seconds())
			}
			fmt.Fprintln(tw)
		} else {
			fmt.Fprintf(tw, "%s\t%s\tcollector\t(no flush yet)\t\t\t\t\t\t\n", k.model, producer)
		}
		fmt.Fprintf(tw, "\t\ttruth\t%d\t%s\t%s\t%s\t%s", g.Requests, fmtT(g.TTFT), fmtT(g.TPOT), fmtT(g.ITL), fmtT(g.E2E))
		for _, tg := range truthSLO {
			fmt.Fprintf(tw, "\t%.1f%%, %.2f", 100*float64(tg.Good)/float64(tg.Requests), float64(tg.Good)/elapsed.Seconds())
		}
		fmt.Fprintln(tw)
		if final && c != nil {
			for i, name := range sloNames {
				if c.met[name] != float64(truthSLO[i].Good) || c.requests[name] != float64(g.Requests) {
					exact = false
				}
			}
			for metric, vals := range map[string][]float64{"llm.ttft.window": g.TTFT, "llm.tpot.window": g.TPOT, "llm.itl.window": g.ITL, "llm.e2e.window": g.E2E} {
				for i, p := range []float64{50, 90, 99} {
					if len(vals) == 0 || c.q[metric] == nil {
						continue
					}
					want := loadgen.Percentile(vals, p)
					worst = math.Max(worst, math.Abs(c.q[metric][quantiles[i]]-want)/want)
				}
			}
		}
	}
	_ = tw.Flush()
	if final {
		verdict := "exact"
		if !exact {
			verdict = "NOT exact (spans still in flight when the last flush happened?)"
		}
		fmt.Fprintf(out, "\nagreement with the ground truth: request counts and goodput %s; windowed percentiles within %.2f%% (the connector promises 1%%)\n", verdict, 100*worst)
	}
}
