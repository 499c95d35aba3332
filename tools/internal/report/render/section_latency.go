// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package render

import (
	"bytes"
	"fmt"
	"html/template"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/llmslo/llmslo/tools/internal/report/schema"
)

// Latency: the exact distributions over successful requests, overall and
// per group, and in HTML a CDF per metric.

func latencyDoc(d *doc, r *schema.Report, _ bool) {
	d.h("Latency (successful requests; ms; exact numpy-linear percentiles)")
	lt := &table{head: []string{"group", "metric", "n", "mean", "p50", "p90", "p99", "p99.9", "max"},
		right: []bool{false, false, true, true, true, true, true, true, true}}
	for _, g := range r.Latency {
		name := truncate(r.GroupName(g.Group), 30)
		for _, id := range schema.MetricIDs {
			m := g.Metrics[id]
			if m.Count == 0 {
				continue
			}
			label := id
			if id == "itl" {
				label = "itl (gaps)"
			}
			if !m.Exact {
				label += "~"
			}
			lt.rows = append(lt.rows, []string{name, label, fmt.Sprint(m.Count), ms(m.Mean), ms(m.P50), ms(m.P90), ms(m.P99), ms(m.P999), ms(m.Max)})
			name = ""
		}
	}
	d.t(lt)
	d.p("The mean beside P99: a mean far below P99 hides the tail users feel. ITL pools every inter-token gap; ~ marks values from a sketch (beyond --max-gaps).")
}

// The HTML report is one file with inline SVG plots drawn by gonum/plot: no
// script, no stylesheet or font fetched from anywhere.

// latencyHTML draws a CDF per metric that has values.
func latencyHTML(b *bytes.Buffer, r *schema.Report) error {
	var plots []template.HTML
	for _, m := range schema.MetricIDs {
		if s, ok := cdfPlot(r, m); ok {
			plots = append(plots, s)
		}
	}
	return latencyTemplate.Execute(b, plots)
}

var latencyTemplate = htmlTemplate("latency", `<h2>Latency distributions</h2>
{{range .}}{{.}}{{end}}
`)

// cdfPlot draws one metric's CDF per group, milliseconds on a log axis.
// Values of 0 have no place on it: each group's curve then starts at the
// share of its values that are 0, its legend entry says so (a group of
// zeros only is in the legend with no curve), and the axis label counts
// them.
func cdfPlot(r *schema.Report, metric string) (template.HTML, bool) {
	var curves []schema.CDF
	for _, c := range r.CDFs {
		if c.Metric == metric {
			curves = append(curves, c)
		}
	}
	if len(curves) > maxPlotGroups {
		return cdfPanels(r, metric, curves)
	}
	p := newPlot(metric+" CDF by group", "", "fraction of values")
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = logTicks{}
	colour := groupColours(r)
	lo, hi := math.Inf(1), math.Inf(-1)
	var entries []legendEntry
	var allZeros int64
	for _, c := range curves {
		pts := cdfXY(c.Sorted)
		allZeros += c.Zeros
		l := &plotter.Line{LineStyle: draw.LineStyle{Color: colour(c.Group), Width: vg.Points(1.5)}}
		if len(pts) > 0 {
			lo, hi = min(lo, pts[0].X), max(hi, pts[len(pts)-1].X)
			if drawn, err := plotter.NewLine(pts); err == nil {
				drawn.LineStyle = l.LineStyle
				p.Add(drawn)
			}
		}
		entries = append(entries, legendEntry{label: truncate(r.GroupName(c.Group), 32), note: zerosNote(c), thumbs: []plot.Thumbnailer{l}})
	}
	if math.IsInf(lo, 1) {
		return "", false
	}
	p.X.Label.Text = cdfAxisLabel(metric, allZeros)
	p.X.Min, p.X.Max = logRange(lo, hi)
	p.Y.Min, p.Y.Max = 0, 1
	return render(p, entries, 4*vg.Inch), true
}

// zerosNote says how many of a group's values are 0, not drawn.
func zerosNote(c schema.CDF) string {
	switch {
	case c.Zeros == 0 || c.Values == 0:
		return ""
	case c.Zeros == c.Values:
		return " (all at 0)"
	default:
		return fmt.Sprintf(" (%s at 0)", pct(schema.Num(float64(c.Zeros)/float64(c.Values))))
	}
}

// cdfPanels draws the CDFs of more groups than colours as small
// multiples on the same axes.
func cdfPanels(r *schema.Report, metric string, curves []schema.CDF) (template.HTML, bool) {
	curves, shown := largest(curves, maxPanels, func(c schema.CDF) int64 { return c.Requests })
	lo, hi := math.Inf(1), math.Inf(-1)
	var allZeros int64
	var names []string
	var lines []plotter.XYs
	for _, c := range curves {
		pts := cdfXY(c.Sorted)
		allZeros += c.Zeros
		if len(pts) > 0 {
			lo, hi = min(lo, pts[0].X), max(hi, pts[len(pts)-1].X)
		}
		names, lines = append(names, r.GroupName(c.Group)+zerosNote(c)), append(lines, thinXY(pts, panelPoints))
	}
	if math.IsInf(lo, 1) {
		return "", false
	}
	lo, hi = logRange(lo, hi)
	var panels []*plot.Plot
	for i, pts := range lines {
		p := newPanel(names[i])
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = fewerLabels{logTicks{}, 3}
		p.Y.Tick.Marker = fewerLabels{niceTicks{}, 3}
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = lo, hi, 0, 1
		if l, err := plotter.NewLine(pts); err == nil && len(pts) > 0 {
			l.Color, l.Width = panelColour, vg.Points(1.5)
			p.Add(l)
		}
		panels = append(panels, p)
	}
	title := fmt.Sprintf("%s CDF by group, one panel each%s", metric, shown)
	note := fmt.Sprintf("x: %s; y: fraction of values; every panel on the same axes.", cdfAxisLabel(metric, allZeros))
	return renderPanels(title, note, panels), true
}

// thinXY keeps at most limit evenly spaced points of pts, the first and
// last included.
func thinXY(pts plotter.XYs, limit int) plotter.XYs {
	if len(pts) <= limit {
		return pts
	}
	out := make(plotter.XYs, limit)
	for i := range out {
		out[i] = pts[i*(len(pts)-1)/(limit-1)]
	}
	return out
}

// cdfAxisLabel names a CDF's axis and counts the values of 0 it leaves out.
func cdfAxisLabel(metric string, zeros int64) string {
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
// each at its rank (values at or below 0 have no place on it). A single
// positive value is a step, from the share of zeros up to 1, so it shows.
func cdfXY(sorted []float64) plotter.XYs {
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
	return pts
}
