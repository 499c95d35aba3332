// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package render

import (
	"bytes"
	"fmt"
	"html/template"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/llmslo/llmslo/tools/internal/report/schema"
)

// The definitions side by side: TTFT, TPOT, ITL and E2E as each benchmark
// tool defines them, over the same requests.

func definitionsDoc(d *doc, r *schema.Report, text bool) {
	d.h("Definitions side by side (ms)")
	d.p("The same %d successful streamed requests with per-chunk timing, as each benchmark tool defines the metrics, under each tool's own names, weighting and percentile method.", r.Definitions.Requests)
	dt := &table{head: []string{"tool", "metric", "its name", "n", "mean", "p50", "p90", "p99"},
		right: []bool{false, false, false, true, true, true, true, true}}
	for _, td := range r.Definitions.Tools {
		name := td.Tool
		for _, id := range []string{"ttft", "tpot", "itl", "e2e"} {
			m, ok := td.Metrics[id]
			if !ok {
				continue
			}
			dt.rows = append(dt.rows, []string{name, id, truncate(m.Label, 24), fmt.Sprint(m.Count), ms(m.Mean), ms(m.P50), ms(m.P90), ms(m.P99)})
			name = ""
		}
	}
	d.t(dt)
	if text {
		for _, td := range r.Definitions.Tools {
			d.p("%s: %s.", td.Tool, td.Differs)
		}
		return
	}
	dd := &table{head: []string{"tool", "what it counts differently", "percentiles"}, right: []bool{false, false, false}}
	for _, td := range r.Definitions.Tools {
		dd.rows = append(dd.rows, []string{td.Name, td.Differs, td.Percentiles})
	}
	d.t(dd)
}

// definitionsHTML lists what each tool counts differently and compares
// each metric id across the tools.
func definitionsHTML(b *bytes.Buffer, r *schema.Report) error {
	data := struct {
		R    *schema.Report
		Defs []template.HTML
	}{R: r}
	for _, m := range []string{"ttft", "tpot", "itl", "e2e"} {
		if s, ok := defsPlot(r, m); ok {
			data.Defs = append(data.Defs, s)
		}
	}
	return definitionsTemplate.Execute(b, data)
}

var definitionsTemplate = htmlTemplate("definitions", `<h2>Definitions compared</h2>
<p>The same {{.R.Definitions.Requests}} streamed requests, each metric as each tool defines it (under the tool's own name).</p>
<table><tr><th>tool</th><th>what it counts differently</th></tr>
{{range .R.Definitions.Tools}}<tr><td>{{.Name}}</td><td style="text-align:left">{{.Differs}}</td></tr>{{end}}</table>
{{range .Defs}}{{.}}{{end}}
`)

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
		entries = append(entries, legendEntry{label: s.label, thumbs: []plot.Thumbnailer{b}})
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
