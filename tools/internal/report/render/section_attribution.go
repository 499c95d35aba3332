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

	"github.com/llmslo/llmslo/tools/internal/report/schema"
)

// Why each SLO's requests missed: the failed constraints by cause with
// their shares, and the slowest misses with the parts of their latency
// (in HTML a stacked bar each).

func attributionDoc(d *doc, r *schema.Report, text bool) {
	for _, a := range r.Attribution {
		if len(a.Groups) == 0 || len(a.Groups[0].Constraints) == 0 {
			continue
		}
		d.h("Why SLO " + a.SLO + " misses")
		d.p("%s", causesNote)
		d.t(causesTable(r, a))
		d.p("%s", slowMissesNote)
		d.t(slowMissesTable(r, a, text))
	}
}

const (
	causesNote = "Each failed constraint by the cause the processor named (llm.slo.<name>.causes): " +
		"requests, share of the constraint's misses and its Wilson score 95% interval; none: the span names no cause."
	slowMissesNote = "Slowest misses by E2E, with the parts of their latency in ms " +
		"(rest: E2E less the known parts; -: the span does not carry the part):"
)

// causesTable lists every group's constraints and causes, each group and
// constraint named on its first row only.
func causesTable(r *schema.Report, a schema.Attribution) *table {
	t := &table{head: []string{"group", "constraint", "misses", "cause", "requests", "share", "95% CI"},
		right: []bool{false, false, true, false, true, true, true}}
	for _, g := range a.Groups {
		group := truncate(r.GroupName(g.Group), 28)
		for _, c := range g.Constraints {
			constraint, misses := c.Constraint, fmt.Sprint(c.Misses)
			for _, cc := range c.Causes {
				t.rows = append(t.rows, []string{group, constraint, misses, cc.Cause, fmt.Sprint(cc.Requests),
					pct(cc.Share), pct(cc.ShareCI95[0]) + "-" + pct(cc.ShareCI95[1])})
				group, constraint, misses = "", "", ""
			}
		}
	}
	return t
}

// slowMissesTable fits 100 columns in text (five rows, the trace ID
// only); Markdown adds TTFT, the causes, the group and the span ID, HTML
// all but the span ID (the page's width).
func slowMissesTable(r *schema.Report, a schema.Attribution, text bool) *table {
	t := &table{head: []string{"e2e"}, right: []bool{true}}
	if !text {
		t.head = append(t.head, "ttft")
		t.right = append(t.right, true)
	}
	for _, id := range schema.PartIDs {
		t.head = append(t.head, partLabel(id, text))
		t.right = append(t.right, true)
	}
	if !text {
		t.head = append(t.head, "causes", "group")
		t.right = append(t.right, false, false)
	}
	t.head = append(t.head, "trace id")
	t.right = append(t.right, false)
	if !text {
		t.head = append(t.head, "span id")
		t.right = append(t.right, false)
	}
	limit := 5
	if !text {
		limit = len(a.Slowest)
	}
	for i, m := range a.Slowest {
		if i == limit {
			break
		}
		row := []string{ms(m.E2E)}
		if !text {
			row = append(row, ms(m.TTFT))
		}
		for _, id := range schema.PartIDs {
			row = append(row, ms(m.Parts[id]))
		}
		if !text {
			row = append(row, strings.Join(m.Causes, " "), truncate(r.GroupName(m.Group), 28))
		}
		row = append(row, m.TraceID)
		if !text {
			row = append(row, m.SpanID)
		}
		t.rows = append(t.rows, row)
	}
	return t
}

// partLabel shortens kv_transfer in the terminal's columns.
func partLabel(id string, text bool) string {
	if text && id == "kv_transfer" {
		return "kv"
	}
	return id
}

// partColors are the parts' colours in the stacked bars, in PartIDs order.
var partColors = []color.RGBA{
	{R: 0xd6, G: 0x3b, B: 0x2f, A: 0xff}, // queue: red, capacity
	{R: 0xf3, G: 0x84, B: 0x00, A: 0xff}, // prefill: orange
	{R: 0x87, G: 0x56, B: 0x92, A: 0xff}, // kv_transfer: purple
	{R: 0x00, G: 0x67, B: 0xa5, A: 0xff}, // network: blue
	{R: 0x00, G: 0x88, B: 0x56, A: 0xff}, // decode: green
	{R: 0xb0, G: 0xb0, B: 0xb0, A: 0xff}, // rest: grey
}

func attributionHTML(b *bytes.Buffer, r *schema.Report) error {
	type htmlAttribution struct {
		SLO    string
		Causes htmlTable
		Misses htmlTable
		Bars   template.HTML
	}
	var data struct {
		Note, MissNote string
		SLOs           []htmlAttribution
	}
	data.Note, data.MissNote = causesNote, slowMissesNote
	for _, a := range r.Attribution {
		if len(a.Groups) == 0 || len(a.Groups[0].Constraints) == 0 {
			continue
		}
		misses := exported(numbered(withoutLast(slowMissesTable(r, a, false))))
		misses.Class = "narrow" // fourteen columns in the page's width
		data.SLOs = append(data.SLOs, htmlAttribution{SLO: a.SLO, Causes: exported(causesTable(r, a)),
			Misses: misses, Bars: missesPlot(a)})
	}
	return attributionTemplate.Execute(b, data)
}

// htmlTable is a table as a template reads it: Rows of cells, each
// aligned as its column.
type htmlTable struct {
	Class string
	Head  []htmlCell
	Rows  [][]htmlCell
}

type htmlCell struct {
	Text string
	Left bool
}

func exported(t *table) htmlTable {
	cells := func(row []string) []htmlCell {
		out := make([]htmlCell, len(row))
		for i, c := range row {
			out[i] = htmlCell{Text: c, Left: !t.right[i]}
		}
		return out
	}
	out := htmlTable{Head: cells(t.head)}
	for _, r := range t.rows {
		out.Rows = append(out.Rows, cells(r))
	}
	return out
}

// withoutLast drops the table's last column.
func withoutLast(t *table) *table {
	n := len(t.head) - 1
	t.head, t.right = t.head[:n], t.right[:n]
	for i := range t.rows {
		t.rows[i] = t.rows[i][:n]
	}
	return t
}

// numbered adds the rank the bars are labelled with.
func numbered(t *table) *table {
	t.head = append([]string{"#"}, t.head...)
	t.right = append([]bool{true}, t.right...)
	for i := range t.rows {
		t.rows[i] = append([]string{fmt.Sprint(i + 1)}, t.rows[i]...)
	}
	return t
}

var attributionTemplate = htmlTemplate("attribution", `{{range .SLOs}}
<h2>Why SLO {{.SLO}} misses</h2>
<p>{{$.Note}}</p>
{{template "table" .Causes}}
<p>{{$.MissNote}}</p>
{{.Bars}}
{{template "table" .Misses}}
{{end}}
{{define "table"}}<table{{with .Class}} class="{{.}}"{{end}}><tr>{{range .Head}}<th{{if .Left}} class="l"{{end}}>{{.Text}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td{{if .Left}} class="l"{{end}}>{{.Text}}</td>{{end}}</tr>
{{end}}</table>{{end}}
`)

// missesPlot stacks each slow miss's parts in a horizontal bar, the
// slowest on top, labelled by its rank in the table below it.
func missesPlot(a schema.Attribution) template.HTML {
	n := len(a.Slowest)
	if n == 0 {
		return ""
	}
	p := newPlot(fmt.Sprintf("SLO %s: the slowest misses, E2E by part", a.SLO), "seconds", "")
	var entries []legendEntry
	var below *plotter.BarChart
	for k, id := range schema.PartIDs {
		vals := make(plotter.Values, n)
		for i, m := range a.Slowest {
			if v := m.Parts[id]; v.Valid() {
				vals[n-1-i] = float64(v)
			}
		}
		bar, err := plotter.NewBarChart(vals, vg.Points(14))
		if err != nil {
			return ""
		}
		bar.Horizontal = true
		bar.Color = partColors[k]
		bar.LineStyle.Width = 0
		if below != nil {
			bar.StackOn(below)
		}
		below = bar
		p.Add(bar)
		entries = append(entries, legendEntry{label: id, thumbs: []plot.Thumbnailer{bar}})
	}
	ticks := make([]plot.Tick, n)
	for i := range a.Slowest {
		ticks[i] = plot.Tick{Value: float64(n - 1 - i), Label: fmt.Sprintf("#%d", i+1)}
	}
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	p.X.Tick.Marker = niceTicks{}
	p.X.Min = 0
	p.Y.Min, p.Y.Max = -0.7, float64(n)-0.3
	return render(p, entries, vg.Length(1.2+0.25*float64(n))*vg.Inch)
}
