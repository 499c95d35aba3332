// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package render

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/llmslo/llmslo/internal/report/schema"
)

// Width is the widest line of the text report.
const Width = 100

// WriteJSON writes the report as indented JSON (the schema package's layout).
func WriteJSON(w io.Writer, r *schema.Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// doc is the report as sections of paragraphs and tables, rendered as text
// or Markdown.
type doc struct {
	blocks []block
}

type block struct {
	heading string // a section heading
	para    string // a paragraph (wrapped in text)
	table   *table
}

type table struct {
	head  []string
	rows  [][]string
	right []bool // right-aligned columns
}

func (d *doc) h(s string) { d.blocks = append(d.blocks, block{heading: s}) }
func (d *doc) p(format string, a ...any) {
	d.blocks = append(d.blocks, block{para: fmt.Sprintf(format, a...)})
}
func (d *doc) t(t *table) { d.blocks = append(d.blocks, block{table: t}) }

func wrap(s string, width int, indent string) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		if line != "" && utf8.RuneCountInString(indent+line+" "+w) > width {
			lines = append(lines, indent+line)
			line = w
			continue
		}
		if line == "" {
			line = w
		} else {
			line += " " + w
		}
	}
	if line != "" {
		lines = append(lines, indent+line)
	}
	return lines
}

func (d *doc) text(w io.Writer) error {
	var b strings.Builder
	for i, bl := range d.blocks {
		switch {
		case bl.heading != "":
			if i > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(bl.heading + "\n")
			b.WriteString(strings.Repeat("=", min(Width, utf8.RuneCountInString(bl.heading))) + "\n")
		case bl.table != nil:
			bl.table.text(&b, "  ")
		default:
			for _, l := range wrap(bl.para, Width, "  ") {
				b.WriteString(l + "\n")
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (t *table) widths() []int {
	ws := make([]int, len(t.head))
	for _, row := range append([][]string{t.head}, t.rows...) {
		for i, c := range row {
			ws[i] = max(ws[i], utf8.RuneCountInString(c))
		}
	}
	return ws
}

func (t *table) text(b *strings.Builder, indent string) {
	ws := t.widths()
	line := func(row []string) {
		var l strings.Builder
		l.WriteString(indent)
		for i, c := range row {
			pad := strings.Repeat(" ", ws[i]-utf8.RuneCountInString(c))
			if i > 0 {
				l.WriteString("  ")
			}
			if t.right[i] {
				l.WriteString(pad + c)
			} else if i < len(row)-1 {
				l.WriteString(c + pad)
			} else {
				l.WriteString(c)
			}
		}
		b.WriteString(strings.TrimRight(l.String(), " ") + "\n")
	}
	line(t.head)
	sep := make([]string, len(ws))
	for i, w := range ws {
		sep[i] = strings.Repeat("-", w)
	}
	line(sep)
	for _, r := range t.rows {
		line(r)
	}
}

func (d *doc) markdown(w io.Writer) error {
	var b strings.Builder
	for _, bl := range d.blocks {
		switch {
		case bl.heading != "":
			if b.Len() == 0 {
				b.WriteString("# " + bl.heading + "\n\n")
			} else {
				b.WriteString("## " + bl.heading + "\n\n")
			}
		case bl.table != nil:
			t := bl.table
			b.WriteString("| " + strings.Join(mdEscape(t.head), " | ") + " |\n|")
			for _, r := range t.right {
				if r {
					b.WriteString("---:|")
				} else {
					b.WriteString("---|")
				}
			}
			b.WriteByte('\n')
			for _, row := range t.rows {
				b.WriteString("| " + strings.Join(mdEscape(row), " | ") + " |\n")
			}
			b.WriteByte('\n')
		default:
			b.WriteString(bl.para + "\n\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func mdEscape(cells []string) []string {
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = strings.ReplaceAll(c, "|", `\|`)
	}
	return out
}

// WriteText writes the terminal report: no line wider than Width.
func WriteText(w io.Writer, r *schema.Report) error { return buildDoc(r, true).text(w) }

// WriteMarkdown writes the report as Markdown.
func WriteMarkdown(w io.Writer, r *schema.Report) error { return buildDoc(r, false).markdown(w) }

// ms formats seconds as milliseconds with four significant digits.
func ms(n schema.Num) string {
	if !n.Valid() {
		return "-"
	}
	v := float64(n) * 1e3
	switch a := math.Abs(v); {
	case a == 0:
		return "0"
	case a < 0.001:
		return fmt.Sprintf("%.3g", v)
	case a < 1:
		return fmt.Sprintf("%.4f", v)
	case a < 10:
		return fmt.Sprintf("%.3f", v)
	case a < 100:
		return fmt.Sprintf("%.2f", v)
	case a < 1000:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

func pct(n schema.Num) string {
	if !n.Valid() {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", float64(n)*100)
}

func rate(n schema.Num) string {
	if !n.Valid() {
		return "-"
	}
	if float64(n) >= 100 {
		return fmt.Sprintf("%.0f", float64(n))
	}
	return fmt.Sprintf("%.2f", float64(n))
}

func dur(s float64) string {
	d := s
	switch {
	case d == 0:
		return "0"
	case d < 1:
		return strings.TrimSuffix(fmt.Sprintf("%gms", d*1e3), ".0")
	}
	return fmt.Sprintf("%gs", d)
}

// truncate shortens s to n runes, keeping its end (a group's last
// dimension, usually the layer, tells rows apart).
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	rs := []rune(s)
	tail := min(8, n/3)
	return string(rs[:n-1-tail]) + "…" + string(rs[len(rs)-tail:])
}

func constraintsLine(c map[string]float64) string {
	var parts []string
	for _, id := range constraintIDs {
		if v, ok := c[id]; ok {
			parts = append(parts, fmt.Sprintf("%s <= %s", id, dur(v)))
		}
	}
	return strings.Join(parts, ", ")
}

func sortedCounts(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return out
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

func buildDoc(r *schema.Report, text bool) *doc {
	d := &doc{}
	d.h("llmslo report")
	when := ""
	if r.Start != "" {
		when = fmt.Sprintf(" from %s to %s (%.1f s)", r.Start, r.End, float64(r.Duration))
	}
	d.p("%d LLM request spans (%d failed) of %d spans read%s. Grouped by %s. Processor settings: %s.",
		r.Requests, r.Failed, r.Spans, when, strings.Join(r.GroupBy, ", "), orDefault(r.Processor))
	if note := r.OverflowNote(); note != "" {
		d.p("%s", note)
	}
	for _, s := range r.SLOs {
		sloSection(d, r, s)
	}
	latencySection(d, r)
	definitionsSection(d, r, text)
	slowestSection(d, r, text)
	return d
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

var constraintIDs = []string{"ttft", "tpot", "itl", "e2e", "queue_time"}

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

func latencySection(d *doc, r *schema.Report) {
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

func definitionsSection(d *doc, r *schema.Report, text bool) {
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

func slowestSection(d *doc, r *schema.Report, text bool) {
	d.h("Slowest requests")
	sw := &table{head: []string{"metric", "ms", "trace id", "span id", "group"}, right: []bool{false, true, false, false, false}}
	limit := 5
	if !text {
		limit = 10
	}
	for _, id := range schema.MetricIDs {
		label := id
		if id == "itl" {
			label = "itl max"
		}
		for i, s := range r.Slowest[id] {
			if i == limit {
				break
			}
			sw.rows = append(sw.rows, []string{label, ms(s.Value), s.TraceID, s.SpanID, truncate(r.GroupName(s.Group), 20)})
			label = ""
		}
	}
	d.t(sw)
}

func orDefault(p string) string {
	if p == "" {
		return "the processor's defaults"
	}
	return p
}
