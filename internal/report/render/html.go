// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package render

import (
	"bytes"
	"cmp"
	"fmt"
	"html/template"
	"image/color"
	"io"
	"math"
	"slices"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/llmslo/llmslo/internal/report/schema"
)

// The HTML report is one file with inline SVG plots drawn by gonum/plot: no
// script, no stylesheet or font fetched from anywhere.

// cdfPlot draws one metric's CDF per group, milliseconds on a log axis.
// Values of 0 have no place on it: each group's curve then starts at the
// share of its values that are 0, its legend entry says so, and the axis
// label counts them.
func cdfPlot(r *schema.Report, metric string) (template.HTML, bool) {
	var curves []schema.CDF
	for _, c := range r.CDFs {
		if c.Metric == metric {
			curves = append(curves, c)
		}
	}
	curves, shown := largest(curves, func(c schema.CDF) int64 { return c.Requests })
	p := newPlot(fmt.Sprintf("%s CDF by group%s", metric, shown), "", "fraction of values")
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = logTicks{}
	lo, hi := math.Inf(1), math.Inf(-1)
	var entries []legendEntry
	allZeros := 0
	for n, c := range curves {
		pts, zeros := cdfXY(c.Sorted)
		allZeros += zeros
		if len(pts) == 0 {
			continue
		}
		lo, hi = min(lo, pts[0].X), max(hi, pts[len(pts)-1].X)
		l, err := plotter.NewLine(pts)
		if err != nil {
			continue
		}
		l.Color = groupColor(n)
		l.Width = vg.Points(1.5)
		p.Add(l)
		label := truncate(r.GroupName(c.Group), 32)
		if zeros > 0 {
			label += fmt.Sprintf(" (%s at 0)", pct(schema.Num(float64(zeros)/float64(len(c.Sorted)))))
		}
		entries = append(entries, legendEntry{label, []plot.Thumbnailer{l}})
	}
	if len(entries) == 0 {
		return "", false
	}
	p.X.Label.Text = cdfAxisLabel(metric, allZeros)
	p.X.Min, p.X.Max = logRange(lo, hi)
	p.Y.Min, p.Y.Max = 0, 1
	return render(p, entries, 4*vg.Inch), true
}

// cdfAxisLabel names a CDF's axis and counts the values of 0 it leaves out.
func cdfAxisLabel(metric string, zeros int) string {
	if zeros == 0 {
		return metric + " (ms, log scale)"
	}
	what := "requests"
	if metric == "itl" {
		what = "gaps"
	}
	return fmt.Sprintf("%s (ms, log scale): %d %s at 0 ms not drawn", metric, zeros, what)
}

// cdfXY places sorted values on a log axis: the positive finite ones,
// each at its rank; zeros counts the values at or below 0. A single
// positive value is a step, from the share of zeros up to 1, so it shows.
func cdfXY(sorted []float64) (plotter.XYs, int) {
	pts := make(plotter.XYs, 0, len(sorted))
	below := 0
	for i, v := range sorted {
		if !finite(v) {
			continue
		}
		if v <= 0 {
			below++
			continue
		}
		y := 1.0
		if len(sorted) > 1 {
			y = float64(i) / float64(len(sorted)-1)
		}
		pts = append(pts, plotter.XY{X: v * 1e3, Y: y})
	}
	if len(pts) == 1 {
		pts = append(plotter.XYs{{X: pts[0].X, Y: float64(below) / float64(len(sorted))}}, pts...)
	}
	return pts, below
}

// largest keeps the maxPlotGroups items with the most requests, in their
// order, and says in a title suffix what it left out.
func largest[T any](items []T, requests func(T) int64) ([]T, string) {
	if len(items) <= maxPlotGroups {
		return items, ""
	}
	idx := make([]int, len(items))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(requests(items[b]), requests(items[a])) })
	idx = idx[:maxPlotGroups]
	slices.Sort(idx)
	out := make([]T, 0, maxPlotGroups)
	for _, i := range idx {
		out = append(out, items[i])
	}
	return out, fmt.Sprintf(" (the %d of %d with most requests)", maxPlotGroups, len(items))
}

// sweepPlot draws an SLO's goodput against the threshold scale: every
// request in a thick line, then the groups.
func sweepPlot(r *schema.Report, name string) template.HTML {
	requests := map[string]int64{}
	for _, s := range r.SLOs {
		for _, g := range s.Groups {
			if s.Name == name {
				requests[r.GroupName(g.Group)] = g.Requests
			}
		}
	}
	var curves []schema.SweepCurve
	for _, c := range r.Sweep {
		if c.SLO == name {
			curves = append(curves, c)
		}
	}
	curves, shown := largest(curves, func(c schema.SweepCurve) int64 {
		if len(c.Group) == 0 {
			return math.MaxInt64 // the overall curve is always drawn
		}
		return requests[r.GroupName(c.Group)]
	})
	p := newPlot(fmt.Sprintf("SLO %s: goodput as every threshold is scaled%s", name, shown), "SLO scale (x thresholds, log)", "goodput")
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.ConstantTicks([]plot.Tick{{Value: 0.25, Label: "0.25x"}, {Value: 0.5, Label: "0.5x"},
		{Value: 1, Label: "1x"}, {Value: 2, Label: "2x"}, {Value: 4, Label: "4x"}})
	var entries []legendEntry
	for n, c := range curves {
		var pts plotter.XYs
		for _, pt := range c.Points {
			if pt.Goodput.Valid() && pt.Scale > 0 {
				pts = append(pts, plotter.XY{X: pt.Scale, Y: float64(pt.Goodput)})
			}
		}
		if len(pts) == 0 {
			continue
		}
		l, s, err := plotter.NewLinePoints(pts)
		if err != nil {
			continue
		}
		l.Color, s.Color = groupColor(n), groupColor(n)
		if len(c.Group) == 0 {
			l.Width = vg.Points(2.5)
		}
		p.Add(l, s)
		entries = append(entries, legendEntry{truncate(r.GroupName(c.Group), 32), []plot.Thumbnailer{l, s}})
	}
	scales := schema.SweepScales()
	p.X.Min, p.X.Max = scales[0], scales[len(scales)-1]
	p.Y.Min, p.Y.Max = 0, 1.02
	return render(p, entries, 4*vg.Inch)
}

var (
	green = color.RGBA{R: 0x2e, G: 0x9e, B: 0x4f, A: 0xff}
	red   = color.RGBA{R: 0xd6, G: 0x3b, B: 0x2f, A: 0xff}
	grey  = color.RGBA{R: 0x9a, G: 0x9a, B: 0x9a, A: 0xff}
)

// timelinePlot stacks each bucket's met, violated and unknown requests
// over clock time (start is the report's first request start).
func timelinePlot(t schema.Timeline, start string) template.HTML {
	step := time.Duration(t.Step * 1e9)
	xlabel := fmt.Sprintf("request start, UTC (buckets of %s)", dur(t.Step))
	t0, err := time.Parse(time.RFC3339Nano, start)
	if err == nil {
		xlabel = fmt.Sprintf("request start, UTC, from %s (buckets of %s)", t0.Format("2006-01-02"), dur(t.Step))
	}
	p := newPlot(fmt.Sprintf("SLO %s: verdicts over time", t.SLO), xlabel, "requests")
	met, vio, unk := make(plotter.Values, len(t.Buckets)), make(plotter.Values, len(t.Buckets)), make(plotter.Values, len(t.Buckets))
	var top float64
	for i, b := range t.Buckets {
		met[i], vio[i], unk[i] = float64(b.Met), float64(b.Violated), float64(b.Unknown)
		top = max(top, met[i]+vio[i]+unk[i])
	}
	width := vg.Length(float64(7*vg.Inch) / float64(max(1, len(t.Buckets))) * 0.8)
	bm, err1 := plotter.NewBarChart(met, width)
	bv, err2 := plotter.NewBarChart(vio, width)
	bu, err3 := plotter.NewBarChart(unk, width)
	if err1 != nil || err2 != nil || err3 != nil {
		return ""
	}
	bm.Color, bv.Color, bu.Color = green, red, grey
	bm.LineStyle.Width, bv.LineStyle.Width, bu.LineStyle.Width = 0, 0, 0
	bv.StackOn(bm)
	bu.StackOn(bv)
	p.Add(bm, bv, bu)
	if err == nil && step > 0 {
		p.X.Tick.Marker = clockTicks{start: t0.UTC(), step: step, n: len(t.Buckets)}
	}
	p.X.Min, p.X.Max = -0.5, float64(len(t.Buckets))-0.5
	p.Y.Min, p.Y.Max = 0, max(1, top*1.05)
	p.Y.Tick.Marker = niceTicks{integer: true}
	entries := []legendEntry{{"met", []plot.Thumbnailer{bm}}, {"violated", []plot.Thumbnailer{bv}}, {"unknown", []plot.Thumbnailer{bu}}}
	return render(p, entries, 3.5*vg.Inch)
}

// defsPlot compares one metric id across the tools: mean, P50 and P99.
func defsPlot(r *schema.Report, metric string) (template.HTML, bool) {
	var names []string
	var mean, p50, p99 plotter.Values
	var top float64
	for _, td := range r.Definitions.Tools {
		m, ok := td.Metrics[metric]
		if !ok || !finite(float64(m.Mean)) || !finite(float64(m.P50)) || !finite(float64(m.P99)) {
			continue
		}
		names = append(names, td.Tool)
		mean = append(mean, float64(m.Mean)*1e3)
		p50 = append(p50, float64(m.P50)*1e3)
		p99 = append(p99, float64(m.P99)*1e3)
		top = max(top, float64(m.Mean)*1e3, float64(m.P50)*1e3, float64(m.P99)*1e3)
	}
	if len(names) == 0 {
		return "", false
	}
	p := newPlot(fmt.Sprintf("%q as each tool defines it", metric), "", "ms")
	w := vg.Points(14)
	var entries []legendEntry
	for i, s := range []struct {
		label string
		v     plotter.Values
	}{{"mean", mean}, {"p50", p50}, {"p99", p99}} {
		b, err := plotter.NewBarChart(s.v, w)
		if err != nil {
			return "", false
		}
		b.Color = groupColor(i)
		b.LineStyle.Width = 0
		b.Offset = vg.Length(i-1) * w
		p.Add(b)
		entries = append(entries, legendEntry{s.label, []plot.Thumbnailer{b}})
	}
	p.NominalX(names...)
	// Half a slot each side: the outer bars of the first and last tool
	// stay inside the data area.
	p.X.Min, p.X.Max = -0.5, float64(len(names))-0.5
	p.Y.Min, p.Y.Max = 0, top*1.05
	if !(top > 0) {
		p.Y.Max = 1
	}
	return render(p, entries, 3.5*vg.Inch), true
}

type htmlSLO struct {
	schema.SLOReport
	Constraint string
	// GoodputColumn and Note say what the goodput divides by.
	GoodputColumn, Note string
	Sweep               template.HTML
	Timeline            template.HTML
}

type htmlPlot struct {
	Title string
	SVG   template.HTML
}

// WriteHTML writes the self-contained HTML report.
func WriteHTML(w io.Writer, r *schema.Report) error {
	data := struct {
		R          *schema.Report
		SLOs       []htmlSLO
		CDFs, Defs []htmlPlot
		Text       string
		GroupName  func(schema.Group) string
	}{R: r, GroupName: r.GroupName}
	for _, s := range r.SLOs {
		h := htmlSLO{SLOReport: s, Constraint: constraintsLine(s.Constraints), Sweep: sweepPlot(r, s.Name), GoodputColumn: goodputColumn(s)}
		if s.Denominator == schema.DenominatorDecidable {
			h.Note = excludedNote
		}
		for _, t := range r.Timeline {
			if t.SLO == s.Name && len(t.Buckets) > 0 {
				h.Timeline = timelinePlot(t, r.Start)
			}
		}
		data.SLOs = append(data.SLOs, h)
	}
	for _, m := range schema.MetricIDs {
		if s, ok := cdfPlot(r, m); ok {
			data.CDFs = append(data.CDFs, htmlPlot{Title: m, SVG: s})
		}
	}
	for _, m := range []string{"ttft", "tpot", "itl", "e2e"} {
		if s, ok := defsPlot(r, m); ok {
			data.Defs = append(data.Defs, htmlPlot{Title: m, SVG: s})
		}
	}
	var txt bytes.Buffer
	if err := WriteText(&txt, r); err != nil {
		return err
	}
	data.Text = txt.String()
	return htmlTemplate.Execute(w, data)
}

var htmlTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"pct": pct, "ms": ms, "rate": rate,
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>llmslo report</title>
<style>
body{font-family:` + pageFonts + `;margin:2em auto;max-width:1100px;color:#222}
h1{margin-bottom:0}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}
table{border-collapse:collapse;margin:.6em 0}td,th{padding:.2em .7em;border-bottom:1px solid #eee;text-align:right;white-space:nowrap}
td:first-child,th:first-child{text-align:left}.sub{color:#666}svg{display:block;margin:.8em 0;max-width:100%;height:auto}svg text{font-family:` + pageFonts + ` !important}
pre{background:#f6f6f6;padding:1em;overflow-x:auto;font-size:12px}
</style></head><body>
<h1>llmslo report</h1>
<p class="sub">{{.R.Requests}} LLM request spans ({{.R.Failed}} failed) of {{.R.Spans}} spans{{if .R.Start}}, {{.R.Start}} to {{.R.End}}{{end}}; grouped by {{range $i, $d := .R.GroupBy}}{{if $i}}, {{end}}{{$d}}{{end}}.</p>
{{with .R.OverflowNote}}<p class="sub">{{.}}</p>{{end}}
{{range .SLOs}}
<h2>SLO {{.Name}}: {{.Constraint}}</h2>
<table><tr><th>group</th><th>requests</th><th>met</th><th>violated</th><th>unknown</th><th>{{.GoodputColumn}}</th><th>95% CI</th><th>good/s</th><th>token goodput</th></tr>
{{range .Groups}}<tr><td>{{call $.GroupName .Group}}</td><td>{{.Requests}}</td><td>{{.Met}}</td><td>{{.Violated}}</td><td>{{.Unknown}}</td><td>{{pct .Goodput}}</td><td>{{pct (index .GoodputCI95 0)}} – {{pct (index .GoodputCI95 1)}}</td><td>{{rate .GoodPerSecond}}</td><td>{{pct .TokenGoodput}}</td></tr>
{{end}}</table>
{{if .Note}}<p>{{.Note}}.</p>{{end}}
{{with index .Groups 0}}
<p>Violations: {{range $k, $v := .Violations}}{{$k}} {{$v}}; {{end}}</p>
<p>By combination: {{range .Combinations}}{{range $i, $c := .Constraints}}{{if $i}}+{{end}}{{$c}}{{end}} {{.Requests}}; {{end}}</p>
<p>Attainable goodput without one constraint: {{range $k, $v := .Attainable}}{{$k}} {{pct $v}}; {{end}}</p>
{{end}}
{{.Sweep}}
{{.Timeline}}
{{end}}
<h2>Latency distributions</h2>
{{range .CDFs}}{{.SVG}}{{end}}
<h2>Definitions compared</h2>
<p>The same {{.R.Definitions.Requests}} streamed requests, each metric as each tool defines it (under the tool's own name).</p>
<table><tr><th>tool</th><th>what it counts differently</th></tr>
{{range .R.Definitions.Tools}}<tr><td>{{.Name}}</td><td style="text-align:left">{{.Differs}}</td></tr>{{end}}</table>
{{range .Defs}}{{.SVG}}{{end}}
<h2>All numbers</h2>
<pre>{{.Text}}</pre>
</body></html>
`))
