// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package render

import (
	"bytes"
	"fmt"
	"html/template"
	"image/color"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/llmslo/llmslo/tools/internal/report/schema"
)

// The capacity: per SLO with an objective and group, goodput by the load
// each server-layer request met on its replica, the knee, and the replicas
// the group's peak needs.

// capacityRows bounds the levels a text or Markdown table lists: past it,
// the lowest and highest few and those around the knee (the JSON has
// every one).
const capacityRows = 24

func capacityDoc(d *doc, r *schema.Report, text bool) {
	d.h("Capacity: goodput by load per replica")
	if len(r.Capacity) == 0 {
		d.p("%s", capacityEmpty(r))
		return
	}
	d.p("%s", capacityIntro(r))
	t := &table{head: []string{"SLO", "group", "objective", "knee", "peak", "P99", "replicas", "needed", "at P99"},
		right: []bool{false, false, true, true, true, true, true, true, true}}
	for _, c := range r.Capacity {
		t.rows = append(t.rows, []string{truncate(c.SLO, 16), truncate(r.GroupName(c.Group), 28), pct(capacityObjective(r, c)),
			kneeCell(c), fmt.Sprint(c.PeakInFlight), fmt.Sprint(c.P99InFlight), fmt.Sprint(c.ReplicasObserved),
			countOrDash(c.ReplicasNeeded), countOrDash(c.ReplicasNeededP99)})
	}
	d.t(t)
	for _, c := range r.Capacity {
		d.p("SLO %s, %s, replicas by %s: %s", c.SLO, r.GroupName(c.Group), c.ReplicaKey, kneeSentence(c))
		obj := capacityObjective(r, c)
		lt := &table{head: []string{"in flight", "requests", "met", "goodput", "95% CI", "objective"}, right: []bool{true, true, true, true, true, false}}
		for _, i := range shownLevels(c, capacityRows) {
			if i < 0 {
				lt.rows = append(lt.rows, []string{"…", "", "", "", "", ""})
				continue
			}
			l := c.Levels[i]
			lt.rows = append(lt.rows, []string{levelRange(l), fmt.Sprint(l.Requests), fmt.Sprint(l.Met), pct(l.Goodput),
				pct(l.CILow) + "-" + pct(l.CIHigh), holds(l, obj)})
		}
		d.t(lt)
	}
}

// capacityEmpty says why the report has no capacity.
func capacityEmpty(r *schema.Report) string {
	withObjective := false
	for _, s := range r.SLOs {
		withObjective = withObjective || s.Objective.Valid()
	}
	if !withObjective {
		return "No SLO has an objective: the capacity is where goodput stops holding one (set objective in the configuration, or objective= in --slo)."
	}
	msg := fmt.Sprintf("No server-layer request selected by an SLO with an objective has a replica attribute (%s) on its resource: the capacity is read from engine spans.",
		strings.Join(r.CapacityBy, ", "))
	if r.CapacityUnplaced > 0 {
		msg += fmt.Sprintf(" %d server-layer requests have none: name the attribute with --capacity-by.", r.CapacityUnplaced)
	}
	return msg
}

// capacityIntro states the rules the numbers follow.
func capacityIntro(r *schema.Report) string {
	s := fmt.Sprintf("Load: the server-layer requests of the same replica (the first of %s on the resource) in flight when a request started, itself included. "+
		"Levels hold at least %d requests (adjacent levels merged from the lowest). The knee is the highest load up to which every level's 95%% upper bound "+
		"stays at or above the objective. Replicas needed: ceil(peak / knee), assuming the load spread evenly over the replicas and the curve holding.",
		strings.Join(r.CapacityBy, ", "), r.CapacityMinRequests)
	if r.CapacityUnplaced > 0 {
		s += fmt.Sprintf(" %d server-layer requests without a replica are left out.", r.CapacityUnplaced)
	}
	return s
}

// capacityObjective is the objective of c's SLO.
func capacityObjective(r *schema.Report, c schema.Capacity) schema.Num {
	for _, s := range r.SLOs {
		if s.Name == c.SLO {
			return s.Objective
		}
	}
	return schema.NaN()
}

func kneeCell(c schema.Capacity) string {
	switch c.Knee {
	case schema.KneeFound:
		return fmt.Sprint(*c.KneeInFlight)
	case schema.KneeNotReached:
		return "not reached"
	}
	return "none"
}

func countOrDash(n *int64) string {
	if n == nil {
		return "-"
	}
	return fmt.Sprint(*n)
}

// kneeSentence says what the knee means for the group.
func kneeSentence(c schema.Capacity) string {
	switch c.Knee {
	case schema.KneeFound:
		return fmt.Sprintf("the objective holds up to %d in flight per replica; the peak of %d in flight needs %d replicas (%d at the P99 of %d), %d served it.",
			*c.KneeInFlight, c.PeakInFlight, *c.ReplicasNeeded, *c.ReplicasNeededP99, c.P99InFlight, c.ReplicasObserved)
	case schema.KneeNotReached:
		top := c.Levels[len(c.Levels)-1].InFlightMax
		return fmt.Sprintf("every observed level holds the objective (up to %d in flight): the knee is not reached, so at most ceil(%d / %d) = %d replicas for the peak; %d served it.",
			top, c.PeakInFlight, top, (c.PeakInFlight+top-1)/top, c.ReplicasObserved)
	}
	return "even the lowest load misses the objective: no number of replicas holds it."
}

func levelRange(l schema.CapacityLevel) string {
	if l.InFlightMax == l.InFlight {
		return fmt.Sprint(l.InFlight)
	}
	return fmt.Sprintf("%d-%d", l.InFlight, l.InFlightMax)
}

func holds(l schema.CapacityLevel, objective schema.Num) string {
	if !objective.Valid() || !l.CIHigh.Valid() {
		return ""
	}
	if l.CIHigh >= objective {
		return "holds"
	}
	return "misses"
}

// shownLevels are the indexes of the levels a table lists, -1 where it
// leaves some out: every one up to limit, else the lowest and highest
// three and those around the knee (or the first miss).
func shownLevels(c schema.Capacity, limit int) []int {
	n := len(c.Levels)
	keep := make([]bool, n)
	if n <= limit {
		for i := range keep {
			keep[i] = true
		}
	} else {
		focus := 0
		if c.KneeInFlight != nil {
			for i, l := range c.Levels {
				if l.InFlightMax == *c.KneeInFlight {
					focus = i
				}
			}
		}
		edge := 3
		side := (limit - 2*edge) / 2
		for i := range keep {
			keep[i] = i < edge || i >= n-edge || i >= focus-side+1 && i <= focus+side
		}
	}
	var out []int
	for i, k := range keep {
		switch {
		case k:
			out = append(out, i)
		case len(out) == 0 || out[len(out)-1] >= 0:
			out = append(out, -1)
		}
	}
	return out
}

// capacityHTML writes the summary table and a plot per SLO and group (the
// maxPlotGroups with most requests).
func capacityHTML(b *bytes.Buffer, r *schema.Report) error {
	data := struct {
		Note, Empty string
		Rows        []capacityRow
		Plots       []template.HTML
		Shown       string
	}{}
	if len(r.Capacity) == 0 {
		data.Empty = capacityEmpty(r)
		return capacityTemplate.Execute(b, data)
	}
	data.Note = capacityIntro(r)
	for _, c := range r.Capacity {
		data.Rows = append(data.Rows, capacityRow{SLO: c.SLO, Group: r.GroupName(c.Group), ReplicaKey: c.ReplicaKey,
			Objective: pct(capacityObjective(r, c)), Knee: kneeCell(c), Peak: c.PeakInFlight, P99: c.P99InFlight,
			Replicas: c.ReplicasObserved, Needed: countOrDash(c.ReplicasNeeded), NeededP99: countOrDash(c.ReplicasNeededP99)})
	}
	plotted, shown := largest(r.Capacity, maxPlotGroups, capacityRequests)
	data.Shown = shown
	for _, c := range plotted {
		data.Plots = append(data.Plots, capacityPlot(r, c))
	}
	return capacityTemplate.Execute(b, data)
}

type capacityRow struct {
	SLO, Group, ReplicaKey, Objective, Knee string
	Peak, P99, Replicas                     int64
	Needed, NeededP99                       string
}

func capacityRequests(c schema.Capacity) int64 {
	var n int64
	for _, l := range c.Levels {
		n += l.Requests
	}
	return n
}

var capacityTemplate = htmlTemplate("capacity", `<h2>Capacity: goodput by load per replica</h2>
{{if .Empty}}<p>{{.Empty}}</p>{{else}}<p>{{.Note}}</p>
<p class="sub">Knee, peak and P99: requests in flight; needed: replicas at the peak.</p>
<table><tr><th>SLO</th><th class="l">group</th><th class="l">replicas by</th><th>objective</th><th>knee</th><th>peak</th><th>P99</th><th>replicas</th><th>needed</th><th>at P99</th></tr>
{{range .Rows}}<tr><td>{{.SLO}}</td><td class="l">{{.Group}}</td><td class="l">{{.ReplicaKey}}</td><td>{{.Objective}}</td><td>{{.Knee}}</td><td>{{.Peak}}</td><td>{{.P99}}</td><td>{{.Replicas}}</td><td>{{.Needed}}</td><td>{{.NeededP99}}</td></tr>
{{end}}</table>
{{if .Shown}}<p class="sub">Plots of the SLOs and groups{{.Shown}}.</p>{{end}}
{{range .Plots}}{{.}}
{{end}}{{end}}`)

// capacityPoints are a capacity's levels as points at the middle of each
// level's range, with the range and the Wilson interval as error bars.
type capacityPoints []schema.CapacityLevel

func (p capacityPoints) Len() int { return len(p) }

func (p capacityPoints) XY(i int) (float64, float64) {
	return float64(p[i].InFlight+p[i].InFlightMax) / 2, float64(p[i].Goodput)
}

func (p capacityPoints) YError(i int) (float64, float64) {
	return float64(p[i].Goodput - p[i].CILow), float64(p[i].CIHigh - p[i].Goodput)
}

func (p capacityPoints) XError(i int) (float64, float64) {
	half := float64(p[i].InFlightMax-p[i].InFlight) / 2
	return half, half
}

var (
	capacityColour  = palette[0]
	objectiveColour = color.RGBA{R: 0x2e, G: 0x9e, B: 0x4f, A: 0xff}
	kneeColour      = color.RGBA{R: 0xd6, G: 0x3b, B: 0x2f, A: 0xff}
)

// capacityPlot draws goodput against load with its 95% interval, the
// objective as a horizontal line and the knee as a vertical one.
func capacityPlot(r *schema.Report, c schema.Capacity) template.HTML {
	p := newPlot(fmt.Sprintf("SLO %s, %s: goodput by requests in flight on the replica", c.SLO, r.GroupName(c.Group)),
		"requests in flight on the replica when the request started", "goodput (bars: 95% interval)")
	var pts capacityPoints
	for _, l := range c.Levels {
		if l.Goodput.Valid() && l.CILow.Valid() && l.CIHigh.Valid() {
			pts = append(pts, l)
		}
	}
	if len(pts) == 0 {
		return ""
	}
	sc, err1 := plotter.NewScatter(pts)
	ye, err2 := plotter.NewYErrorBars(pts)
	xe, err3 := plotter.NewXErrorBars(pts)
	if err1 != nil || err2 != nil || err3 != nil {
		return ""
	}
	sc.Color, ye.Color, xe.Color = capacityColour, capacityColour, capacityColour
	sc.Shape = draw.CircleGlyph{}
	p.Add(ye, xe, sc)
	lo, hi := float64(pts[0].InFlight), float64(pts[len(pts)-1].InFlightMax)
	p.X.Min, p.X.Max = max(0, lo-1), hi+1
	p.Y.Min, p.Y.Max = 0, 1.02
	p.X.Tick.Marker = niceTicks{integer: true}
	entries := []legendEntry{{label: "goodput", thumbs: []plot.Thumbnailer{sc}}}
	if obj := capacityObjective(r, c); obj.Valid() {
		l, err := plotter.NewLine(plotter.XYs{{X: p.X.Min, Y: float64(obj)}, {X: p.X.Max, Y: float64(obj)}})
		if err == nil {
			l.Color, l.Dashes = objectiveColour, []vg.Length{vg.Points(6), vg.Points(3)}
			p.Add(l)
			entries = append(entries, legendEntry{label: "objective " + pct(obj), thumbs: []plot.Thumbnailer{l}})
		}
	}
	if c.KneeInFlight != nil {
		k := float64(*c.KneeInFlight)
		l, err := plotter.NewLine(plotter.XYs{{X: k, Y: 0}, {X: k, Y: 1.02}})
		if err == nil {
			l.Color, l.Width, l.Dashes = kneeColour, vg.Points(1.5), []vg.Length{vg.Points(3), vg.Points(3)}
			p.Add(l)
			entries = append(entries, legendEntry{label: fmt.Sprintf("knee: %d in flight", *c.KneeInFlight), thumbs: []plot.Thumbnailer{l}})
		}
	}
	return render(p, entries, 3.5*vg.Inch)
}
