// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/llmslo/llmslo/tools/internal/loadgen"
	"github.com/llmslo/llmslo/tools/internal/termtext"
)

var (
	quantiles   = []string{"0.5", "0.9", "0.99"}
	percentiles = []float64{50, 90, 99}
	// windowMetrics pairs each window gauge with its ground-truth values.
	windowMetrics = []string{"llm.ttft.window", "llm.tpot.window", "llm.itl.window", "llm.e2e.window"}
)

// group is one series of the connector (model, producer) with its ground
// truth: truth[i] summarizes the generator's requests for sloNames[i].
type group struct {
	key   key
	c     *collected // nil before the connector's first flush of the series
	truth []*loadgen.Group
}

func (g *group) flushed() bool { return g.c != nil && g.c.requests[sloNames[0]] > 0 }

func (g *group) truthValues(metric string) []float64 {
	t := g.truth[0]
	return map[string][]float64{"llm.ttft.window": t.TTFT, "llm.tpot.window": t.TPOT, "llm.itl.window": t.ITL, "llm.e2e.window": t.E2E}[metric]
}

// worstDiff is the largest relative difference between the collector's
// window percentiles and the exact percentiles of the same requests.
func (g *group) worstDiff() float64 {
	worst := 0.0
	if g.c == nil {
		return 0
	}
	for _, metric := range windowMetrics {
		vals := g.truthValues(metric)
		for i, p := range percentiles {
			if len(vals) == 0 || g.c.q[metric] == nil {
				continue
			}
			want := loadgen.Percentile(vals, p)
			worst = math.Max(worst, math.Abs(g.c.q[metric][quantiles[i]]-want)/want)
		}
	}
	return worst
}

// exact reports whether request counts and goodput equal the ground truth.
func (g *group) exact() bool {
	if g.c == nil {
		return false
	}
	for i, name := range sloNames {
		if g.c.met[name] != float64(g.truth[i].Good) || g.c.requests[name] != float64(g.truth[i].Requests) {
			return false
		}
	}
	return true
}

// groups pairs the collector's series with the generator's ground truth,
// grouped like the series: model and producer.
func groups(md pmetric.Metrics, truths []loadgen.Truth) []*group {
	coll := collect(md)
	byKey := map[key][]loadgen.Truth{}
	for _, t := range truths {
		k := key{t.Model, t.Shape.Service(), t.Layer}
		byKey[k] = append(byKey[k], t)
	}
	var out []*group
	for k, ts := range byKey {
		g := &group{key: k, c: coll[k]}
		for _, name := range sloNames {
			g.truth = append(g.truth, loadgen.Summarize(ts, slos[name])[0])
		}
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].key, out[j].key
		return a.model+a.service < b.model+b.service
	})
	return out
}

// printTable prints one refresh: the wide layout (a collector row and a
// truth row per series) when it fits in width columns (0: unlimited), else
// the narrow one, which folds the truth rows into difference columns.
func printTable(out io.Writer, md pmetric.Metrics, truths []loadgen.Truth, elapsed time.Duration, final bool, width int) {
	gs := groups(md, truths)
	title := "live"
	if final {
		title = "final"
	}
	text := wideTable(gs, title, elapsed)
	if !termtext.Fits(text, width) {
		text = narrowTable(gs, title, elapsed, width)
	}
	fmt.Fprint(out, text)
	if !final {
		return
	}
	worst, exact := 0.0, true
	for _, g := range gs {
		if g.c != nil {
			worst = math.Max(worst, g.worstDiff())
			exact = exact && g.exact()
		}
	}
	verdict := "exact"
	if !exact {
		verdict = "NOT exact (spans still in flight when the last flush happened?)"
	}
	fmt.Fprintln(out, "\n"+termtext.Wrap(fmt.Sprintf("agreement with the ground truth: request counts and goodput %s; windowed percentiles within %.2f%% (the connector promises 1%%)", verdict, 100*worst), width, "  "))
}

func wideTable(gs []*group, title string, elapsed time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n== %s, %s: SLO interactive = TTFT<=500ms, TPOT<=15ms, E2E<=2s; batch = E2E<=30s; percentiles p50/p90/p99 in ms over the connector's 1m window ==\n",
		title, elapsed.Round(time.Second))
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MODEL\tPRODUCER\tFROM\tREQUESTS\tTTFT\tTPOT\tITL\tE2E\tINTERACTIVE goodput, good/s\tBATCH goodput, good/s")
	for _, g := range gs {
		k, c := g.key, g.c
		producer := fmt.Sprintf("%s (%s)", k.service, k.layer)
		if g.flushed() {
			fmt.Fprintf(tw, "%s\t%s\tcollector\t%.0f", k.model, producer, c.requests[sloNames[0]])
			for _, metric := range windowMetrics {
				fmt.Fprintf(tw, "\t%s", fmtQ(c, metric, wideMs))
			}
			for _, name := range sloNames {
				fmt.Fprintf(tw, "\t%.1f%%, %.2f", 100*c.met[name]/max(c.requests[name], 1), c.met[name]/elapsed.Seconds())
			}
			fmt.Fprintln(tw)
		} else {
			fmt.Fprintf(tw, "%s\t%s\tcollector\t(no flush yet)\t\t\t\t\t\t\n", k.model, producer)
		}
		fmt.Fprintf(tw, "\t\ttruth\t%d", g.truth[0].Requests)
		for _, metric := range windowMetrics {
			fmt.Fprintf(tw, "\t%s", fmtT(g.truthValues(metric), wideMs))
		}
		for _, tg := range g.truth {
			fmt.Fprintf(tw, "\t%.1f%%, %.2f", 100*float64(tg.Good)/float64(tg.Requests), float64(tg.Good)/elapsed.Seconds())
		}
		fmt.Fprintln(tw)
	}
	_ = tw.Flush()
	return b.String()
}

// narrowTable shows the collector's numbers only, with the ground truth
// folded into a difference column (latencies) and a truth column (goodput),
// in two tables that fit 120 columns.
func narrowTable(gs []*group, title string, elapsed time.Duration, width int) string {
	var b strings.Builder
	b.WriteString("\n" + termtext.Wrap(fmt.Sprintf("== %s, %s: the collector's p50/p90/p99 (ms, 1m window); DIFF: largest difference from the ground truth", title, elapsed.Round(time.Second)), width, "   ") + "\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MODEL\tPRODUCER\tREQUESTS\tTTFT\tTPOT\tITL\tE2E\tDIFF")
	for _, g := range gs {
		fmt.Fprintf(tw, "%s\t%s/%s", shortModel(g.key.model), g.key.service, g.key.layer)
		if !g.flushed() { // the connector has not flushed this series yet
			fmt.Fprintf(tw, "\t0 (truth %d)\t-\t-\t-\t-\t-\n", g.truth[0].Requests)
			continue
		}
		n := g.c.requests[sloNames[0]]
		if n == float64(g.truth[0].Requests) {
			fmt.Fprintf(tw, "\t%.0f", n)
		} else {
			fmt.Fprintf(tw, "\t%.0f (truth %d)", n, g.truth[0].Requests)
		}
		for _, metric := range windowMetrics {
			fmt.Fprintf(tw, "\t%s", fmtQ(g.c, metric, narrowMs))
		}
		fmt.Fprintf(tw, "\t%.2f%%\n", 100*g.worstDiff())
	}
	_ = tw.Flush()
	b.WriteString("\n" + termtext.Wrap("   SLOs: interactive = TTFT<=500ms, TPOT<=15ms, E2E<=2s; batch = E2E<=30s. Goodput and good requests/s:", width, "   ") + "\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MODEL\tPRODUCER\tINTERACTIVE\tBATCH\tGROUND TRUTH")
	for _, g := range gs {
		fmt.Fprintf(tw, "%s\t%s/%s", shortModel(g.key.model), g.key.service, g.key.layer)
		if !g.flushed() {
			fmt.Fprintln(tw, "\t-\t-\t")
			continue
		}
		for _, name := range sloNames {
			fmt.Fprintf(tw, "\t%s", goodput(g.c.met[name], g.c.requests[name], elapsed))
		}
		if g.exact() {
			fmt.Fprintln(tw, "\tsame")
			continue
		}
		var truth []string
		for _, tg := range g.truth {
			truth = append(truth, goodput(float64(tg.Good), float64(tg.Requests), elapsed))
		}
		fmt.Fprintf(tw, "\t%s\n", strings.Join(truth, ", "))
	}
	_ = tw.Flush()
	return b.String()
}

func goodput(met, requests float64, elapsed time.Duration) string {
	return fmt.Sprintf("%.1f%% %.2f/s", 100*met/max(requests, 1), met/elapsed.Seconds())
}

// shortModel drops the "-instruct" of the demo's model names.
func shortModel(m string) string { return strings.TrimSuffix(m, "-instruct") }

// wideMs prints milliseconds with one decimal; narrowMs drops it from 100 ms
// up, where it is noise next to the percentile's spread.
func wideMs(ms float64) string { return fmt.Sprintf("%.1f", ms) }

func narrowMs(ms float64) string {
	if ms >= 100 {
		return fmt.Sprintf("%.0f", ms)
	}
	return fmt.Sprintf("%.1f", ms)
}

func fmtQ(c *collected, metric string, f func(float64) string) string {
	if c == nil || c.q[metric] == nil {
		return "-"
	}
	var parts []string
	for _, q := range quantiles {
		parts = append(parts, f(1000*c.q[metric][q]))
	}
	return strings.Join(parts, "/")
}

func fmtT(sorted []float64, f func(float64) string) string {
	if len(sorted) == 0 {
		return "-"
	}
	var parts []string
	for _, p := range percentiles {
		parts = append(parts, f(1000*loadgen.Percentile(sorted, p)))
	}
	return strings.Join(parts, "/")
}
