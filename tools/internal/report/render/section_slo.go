// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package render

import (
	"bytes"
	"fmt"
	"html/template"
	"image/color"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/llmslo/llmslo/tools/internal/report/schema"
)

// The SLOs, one after the other: goodput per group with its interval, what
// broke it, what dropping each constraint would buy, the SLO-scale sweep
// and, in HTML, the verdicts over time.

func slosDoc(d *doc, r *schema.Report, _ bool) {
	for _, s := range r.SLOs {
		sloSection(d, r, s)
	}
}

func sloSection(d *doc, r *schema.Report, s schema.SLOReport) {
	d.h(fmt.Sprintf("SLO %s: %s", s.Name, constraintsLine(s.Constraints)))
	t := &table{head: []string{"group", "requests", "met", "violated", "unknown", goodputColumn(s), "95% CI", "good/s"},
		right: []bool{false, true, true, true, true, true, true, true}}
	for _, g := range s.Groups {
		t.rows = append(t.rows, []string{truncate(r.GroupName(g.Group), 34), fmt.Sprint(g.Requests), fmt.Sprint(g.Met),
			fmt.Sprint(g.Violated), fmt.Sprint(g.Unknown), pct(g.Goodput),
			pct(g.GoodputCI95[0]) + "-" + pct(g.GoodputCI95[1]), rate(g.GoodPerSecond)})
	}
	d.t(t)
	if s.Denominator == schema.DenominatorDecidable {
		d.p("%s.", excludedNote)
	}
	if len(s.Groups) == 0 {
		return
	}
	all := s.Groups[0]
	d.p("Token goodput: %s of %d output tokens (%s good tokens/s).", pct(all.TokenGoodput), all.OutputTokens, rate(all.GoodTokensPerSecond))
	if len(all.Violations) > 0 {
		d.p("Violations by constraint: %s.", strings.Join(sortedCounts(all.Violations), ", "))
	}
	if len(all.Combinations) > 0 {
		var cs []string
		for _, c := range all.Combinations {
			cs = append(cs, fmt.Sprintf("%s %d", strings.Join(c.Constraints, "+"), c.Requests))
		}
		d.p("By combination (exactly these failed): %s.", strings.Join(cs, ", "))
	}
	if len(all.Attainable) > 0 {
		var as []string
		for _, id := range constraintIDs {
			if v, ok := all.Attainable[id]; ok {
				as = append(as, fmt.Sprintf("without %s %s", id, pct(v)))
			}
		}
		d.p("Attainable goodput if one constraint were dropped: %s (now %s).", strings.Join(as, ", "), pct(all.Goodput))
	}
	sweepTable(d, r, s.Name)
}

// excludedNote says what the goodput of an SLO with unknown_verdicts:
// exclude divides by.
const excludedNote = "Unknown verdicts excluded (unknown_verdicts: exclude): goodput = met / (met + violated), over the decidable requests"

// goodputColumn titles the goodput column by its denominator.
func goodputColumn(s schema.SLOReport) string {
	if s.Denominator == schema.DenominatorDecidable {
		return "goodput of decidable"
	}
	return "goodput"
}

// sweepTable shows every other sweep point, overall and per group.
func sweepTable(d *doc, r *schema.Report, name string) {
	var curves []schema.SweepCurve
	for _, c := range r.Sweep {
		if c.SLO == name {
			curves = append(curves, c)
		}
	}
	if len(curves) == 0 {
		return
	}
	st := &table{head: []string{"SLO scale"}, right: []bool{false}}
	for _, p := range textSweep(curves[0].Points) {
		st.head = append(st.head, scaleLabel(p.Scale))
		st.right = append(st.right, true)
	}
	for _, c := range curves {
		row := []string{truncate(r.GroupName(c.Group), 24)}
		for _, p := range textSweep(c.Points) {
			row = append(row, pct(p.Goodput))
		}
		st.rows = append(st.rows, row)
	}
	d.p("Goodput with every threshold scaled (DistServe's SLO scale):")
	d.t(st)
}

// textSweepScales are the sweep points shown in text: 0.25x, 0.35x, ... 4x.
func textSweep(points []schema.SweepPoint) []schema.SweepPoint {
	var out []schema.SweepPoint
	for i, p := range points {
		if i%2 == 0 {
			out = append(out, p)
		}
	}
	return out
}

func scaleLabel(s float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", s), "0"), ".") + "x"
}

// slosHTML writes every SLO's table, notes and plots.
func slosHTML(b *bytes.Buffer, r *schema.Report) error {
	data := struct {
		SLOs      []htmlSLO
		GroupName func(schema.Group) string
	}{GroupName: r.GroupName}
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
	return slosTemplate.Execute(b, data)
}

var slosTemplate = htmlTemplate("slos", `{{range .SLOs}}
<h2>SLO {{.Name}}: {{.Constraint}}</h2>
<table><tr><th>group</th><th>requests</th><th>met</th><th>violated</th><th>unknown</th><th>{{.GoodputColumn}}</th><th>95% CI</th><th>good/s</th><th>token goodput</th></tr>
{{range .Groups}}<tr><td>{{call $.GroupName .Group}}</td><td>{{.Requests}}</td><td>{{.Met}}</td><td>{{.Violated}}</td><td>{{.Unknown}}</td><td>{{pct .Goodput}}</td><td>{{pct (index .GoodputCI95 0)}} – {{pct (index .GoodputCI95 1)}}</td><td>{{rate .GoodPerSecond}}</td><td>{{pct .TokenGoodput}}</td></tr>
{{end}}</table>
{{if .Note}}<p>{{.Note}}.</p>{{end}}
{{with index .Groups 0}}
<p>Violations: {{range counts .Violations}}{{.}}; {{end}}</p>
<p>By combination: {{range .Combinations}}{{range $i, $c := .Constraints}}{{if $i}}+{{end}}{{$c}}{{end}} {{.Requests}}; {{end}}</p>
<p>Attainable goodput without one constraint: {{range $k, $v := .Attainable}}{{$k}} {{pct $v}}; {{end}}</p>
{{end}}
{{.Sweep}}
{{.Timeline}}
{{end}}
`)

type htmlSLO struct {
	schema.SLOReport
	Constraint string
	// GoodputColumn and Note say what the goodput divides by.
	GoodputColumn, Note string
	Sweep               template.HTML
	Timeline            template.HTML
}

// sweepPlot draws an SLO's goodput against the threshold scale: every
// request in a thick line, then the groups.
func sweepPlot(r *schema.Report, name string) template.HTML {
	var curves []schema.SweepCurve
	for _, c := range r.Sweep {
		if c.SLO == name {
			curves = append(curves, c)
		}
	}
	if len(curves) > maxPlotGroups {
		return sweepPanels(r, name, curves)
	}
	p := newPlot(fmt.Sprintf("SLO %s: goodput as every threshold is scaled", name), "SLO scale (x thresholds, log)", "goodput")
	sweepAxes(p, sweepTicks)
	var entries []legendEntry
	colour := groupColours(r)
	for _, c := range curves {
		pts := sweepXY(c)
		if len(pts) == 0 {
			continue
		}
		l, s, err := plotter.NewLinePoints(pts)
		if err != nil {
			continue
		}
		l.Color, s.Color = colour(c.Group), colour(c.Group)
		if len(c.Group) == 0 {
			l.Width = vg.Points(2.5)
		}
		p.Add(l, s)
		entries = append(entries, legendEntry{label: truncate(r.GroupName(c.Group), 32), thumbs: []plot.Thumbnailer{l, s}})
	}
	return render(p, entries, 4*vg.Inch)
}

// sweepPanels draws the sweep of more groups than colours as small
// multiples, each group over the curve of every request in grey.
func sweepPanels(r *schema.Report, name string, curves []schema.SweepCurve) template.HTML {
	requests := map[string]int64{}
	for _, s := range r.SLOs {
		for _, g := range s.Groups {
			if s.Name == name {
				requests[r.GroupName(g.Group)] = g.Requests
			}
		}
	}
	var all plotter.XYs
	var groups []schema.SweepCurve
	for _, c := range curves {
		if len(c.Group) == 0 {
			all = sweepXY(c)
		} else {
			groups = append(groups, c)
		}
	}
	groups, shown := largest(groups, maxPanels, func(c schema.SweepCurve) int64 { return requests[r.GroupName(c.Group)] })
	var panels []*plot.Plot
	for _, c := range groups {
		p := newPanel(r.GroupName(c.Group))
		sweepAxes(p, panelSweepTicks)
		p.Y.Tick.Marker = fewerLabels{niceTicks{}, 3}
		for i, pts := range []plotter.XYs{all, sweepXY(c)} {
			if len(pts) == 0 {
				continue
			}
			l, s, err := plotter.NewLinePoints(pts)
			if err != nil {
				continue
			}
			l.Color, s.Color = lightGrey, lightGrey
			if i == 1 {
				l.Color, s.Color = panelColour, panelColour
			}
			s.Radius = vg.Points(1.5)
			p.Add(l, s)
		}
		panels = append(panels, p)
	}
	title := fmt.Sprintf("SLO %s: goodput as every threshold is scaled, one panel per group%s", name, shown)
	note := "x: SLO scale (x thresholds, log); y: goodput; grey: every request the SLO selected; every panel on the same axes."
	return renderPanels(title, note, panels)
}

// sweepXY are a sweep curve's points that a log axis can place.
func sweepXY(c schema.SweepCurve) plotter.XYs {
	var pts plotter.XYs
	for _, pt := range c.Points {
		if pt.Goodput.Valid() && pt.Scale > 0 {
			pts = append(pts, plotter.XY{X: pt.Scale, Y: float64(pt.Goodput)})
		}
	}
	return pts
}

// The sweep's scale ticks: every power of two on a plot, fewer on a panel.
var (
	sweepTicks = plot.ConstantTicks([]plot.Tick{{Value: 0.25, Label: "0.25x"}, {Value: 0.5, Label: "0.5x"},
		{Value: 1, Label: "1x"}, {Value: 2, Label: "2x"}, {Value: 4, Label: "4x"}})
	panelSweepTicks = plot.ConstantTicks([]plot.Tick{{Value: 0.25, Label: "0.25x"}, {Value: 0.5},
		{Value: 1, Label: "1x"}, {Value: 2}, {Value: 4, Label: "4x"}})
)

// sweepAxes sets the sweep's axes: the scales on a log axis, goodput from
// 0 to just above 1.
func sweepAxes(p *plot.Plot, ticks plot.Ticker) {
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = ticks
	scales := schema.SweepScales()
	p.X.Min, p.X.Max = scales[0], scales[len(scales)-1]
	p.Y.Min, p.Y.Max = 0, 1.02
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
	entries := []legendEntry{{label: "met", thumbs: []plot.Thumbnailer{bm}}, {label: "violated", thumbs: []plot.Thumbnailer{bv}}, {label: "unknown", thumbs: []plot.Thumbnailer{bu}}}
	return render(p, entries, 3.5*vg.Inch)
}
