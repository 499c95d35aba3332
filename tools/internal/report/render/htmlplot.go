// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package render

import (
	"bytes"
	"cmp"
	"fmt"
	"html/template"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/llmslo/llmslo/tools/internal/report/schema"
)

// The layout every HTML plot shares: the data area on the left, the legend
// in a column of its own on the right, so no entry covers a curve.

// plotWidth is every plot's width: the page's column.
const plotWidth = 9 * vg.Inch

// maxPlotGroups is how many groups one plot draws in colours: the
// palette's size. A plot of more groups is drawn as small multiples
// (multiples.go).
const maxPlotGroups = 12

// palette is the first twelve of Kenneth Kelly's colours of maximum
// contrast, without white and with the yellow (unreadable on white)
// replaced by black: twelve groups stay apart (TestPaletteDistinct).
var palette = []color.RGBA{
	{R: 0x00, G: 0x67, B: 0xa5, A: 0xff}, // strong blue
	{R: 0xf3, G: 0x84, B: 0x00, A: 0xff}, // vivid orange
	{R: 0x00, G: 0x88, B: 0x56, A: 0xff}, // vivid green
	{R: 0xbe, G: 0x00, B: 0x32, A: 0xff}, // vivid red
	{R: 0x87, G: 0x56, B: 0x92, A: 0xff}, // strong purple
	{R: 0x22, G: 0x22, B: 0x22, A: 0xff}, // black
	{R: 0xa1, G: 0xca, B: 0xf1, A: 0xff}, // very light blue
	{R: 0xc2, G: 0xb2, B: 0x80, A: 0xff}, // greyish yellow
	{R: 0xe6, G: 0x8f, B: 0xac, A: 0xff}, // strong purplish pink
	{R: 0x84, G: 0x84, B: 0x82, A: 0xff}, // medium grey
	{R: 0x88, G: 0x2d, B: 0x17, A: 0xff}, // strong reddish brown
	{R: 0x8d, G: 0xb6, B: 0x00, A: 0xff}, // vivid yellowish green
}

func groupColor(i int) color.Color { return palette[i%len(palette)] }

// groupColours gives each group of r one colour in every plot: by its
// place among the report's groups ("all" first), not among one plot's
// curves, where a group without values for a metric shifted the colours
// of every group after it.
func groupColours(r *schema.Report) func(schema.Group) color.Color {
	index := map[string]int{"all": 0}
	for _, g := range r.Latency {
		if name := r.GroupName(g.Group); name != "all" {
			if _, ok := index[name]; !ok {
				index[name] = len(index)
			}
		}
	}
	return func(g schema.Group) color.Color {
		i, ok := index[r.GroupName(g)]
		if !ok {
			i = len(index)
		}
		return groupColor(i)
	}
}

// plotFont is Liberation Sans, metrically Arial and Helvetica: the page's
// stylesheet names the same family first, so plots and prose share a font.
var plotFont = font.Font{Typeface: "Liberation", Variant: "Sans"}

// pageFonts is the page's font stack, also forced on the SVG text.
const pageFonts = `"Liberation Sans",Arial,Helvetica,sans-serif`

func sans(size vg.Length) font.Face { return font.DefaultCache.Lookup(plotFont, size) }

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Title.TextStyle.Font = sans(13).Font
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = sans(11).Font
		a.Tick.Label.Font = sans(10).Font
	}
	p.Y.Tick.Marker = niceTicks{}
	p.Add(plotter.NewGrid())
	return p
}

// legendEntry is one line of a plot's legend: a label, shortened to fit
// the column when it must, then a note kept whole (" (12.5% at 0)").
type legendEntry struct {
	label  string
	note   string
	thumbs []plot.Thumbnailer
}

// legendMin is the legend column's least width: plots of short labels keep
// one data area width, so their axes line up down the page. legendMax is
// its greatest: a longer group name is shortened in the middle (its end,
// where group names differ, kept), so that it neither runs off the page
// nor squeezes the data area.
const (
	legendMin = 1.5 * vg.Inch
	legendMax = plotWidth / 3
)

// fallbackSlack is how much wider than the plot font's metrics a label may
// be drawn: a browser without Liberation Sans, Arial or Helvetica falls
// back to a sans-serif such as DejaVu Sans, up to 15% wider, and the
// legend must still fit the page.
const fallbackSlack = 1.15

// legendOf is the legend of entries and the width of its column; 0 for
// none.
func legendOf(entries []legendEntry, dc draw.Canvas) (plot.Legend, vg.Length) {
	l := plot.NewLegend()
	l.TextStyle.Font = sans(10).Font
	l.Left, l.Top = true, true
	l.Padding = vg.Points(3)
	l.ThumbnailWidth = vg.Points(24)
	if len(entries) == 0 {
		return l, 0
	}
	for _, e := range entries {
		l.Add(legendLabel(l, e.label, e.note), e.thumbs...)
	}
	return l, min(legendMax, max(legendMin, l.Rectangle(dc).Size().X*fallbackSlack+vg.Points(16)))
}

// legendLabel is label shortened to fit the legend column at legendMax
// beside a thumbnail, the padding around it and 16 points of margin, in a
// fallback font too.
func legendLabel(l plot.Legend, label, note string) string {
	room := (legendMax-l.ThumbnailWidth-2*l.Padding-vg.Points(16))/fallbackSlack - l.TextStyle.Width(note)
	return fitLine(l.TextStyle, label, max(room, l.TextStyle.Width("m…m"))) + note
}

// render draws p beside its legend as inline SVG markup (the XML
// declaration dropped).
func render(p *plot.Plot, entries []legendEntry, h vg.Length) template.HTML {
	c := vgsvg.New(plotWidth, h)
	dc := draw.New(c)
	l, lw := legendOf(entries, dc)
	// Centred over the plot, a title wider than it would be clipped.
	p.Title.Text = wrapLines(p.Title.TextStyle, p.Title.Text, plotWidth-lw-vg.Points(10))
	p.Draw(xLabel(p, draw.Crop(dc, 0, -lw, 0, 0)))
	if len(entries) > 0 {
		top := p.Title.TextStyle.Rectangle(p.Title.Text).Size().Y + p.Title.Padding
		l.Draw(draw.Crop(dc, plotWidth-lw+vg.Points(10), 0, 0, -top))
	}
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return template.HTML(template.HTMLEscapeString(err.Error()))
	}
	return svgMarkup(b.String())
}

// svgMarkup is vgsvg's document as inline markup: the XML declaration
// dropped.
func svgMarkup(s string) template.HTML {
	if i := strings.Index(s, "<svg"); i >= 0 {
		s = s[i:]
	}
	return template.HTML(s) //nolint:gosec // markup generated by vgsvg from numbers and escaped labels
}

// xLabel draws the x axis' label centred under the data area and returns
// the canvas left for the plot, the label taken off the axis: gonum/plot
// pads a log axis for a centred label as if it sat at the data's linear
// midpoint, which left an empty band between the curves and the legend.
func xLabel(p *plot.Plot, c draw.Canvas) draw.Canvas {
	text := p.X.Label.Text
	if text == "" {
		return c
	}
	p.X.Label.Text = ""
	sty := p.X.Label.TextStyle
	area := draw.Crop(c, 0, 0, sty.Height(text)+p.X.Label.Padding, 0)
	data := p.DataCanvas(area)
	x := data.Center().X
	c.FillText(sty, vg.Point{X: x, Y: c.Min.Y + sty.FontExtents().Descent}, text)
	return area
}

// finite reports whether v can be placed on a linear axis.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// logRange pads [lo, hi] (lo > 0) on a log axis: a single value gets a
// factor of two each side, where gonum/plot's own padding of ±1 would
// cross zero.
func logRange(lo, hi float64) (float64, float64) {
	if hi <= lo {
		return lo / 2, hi * 2
	}
	return lo, hi
}

// logTicks labels a log axis densely enough to read: every 1-9 multiple of
// a power of ten over about a decade, 1-2-5 over up to three, powers of ten
// beyond (every k-th decade past 12); within a range narrower than its
// labelled steps it falls back to linear ticks.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi > lo) || !finite(hi) {
		return nil
	}
	d0, d1 := int(math.Floor(math.Log10(lo))), int(math.Ceil(math.Log10(hi)))
	decades := math.Log10(hi / lo)
	labelled := map[int]bool{1: true}
	switch {
	case decades <= 1.2:
		labelled = map[int]bool{1: true, 2: true, 3: true, 4: true, 5: true, 6: true, 7: true, 8: true, 9: true}
	case decades <= 3:
		labelled = map[int]bool{1: true, 2: true, 5: true}
	}
	every := max(1, (d1-d0+11)/12)
	var ticks []plot.Tick
	nLabels := 0
	for d := d0; d <= d1; d++ {
		for m := 1; m <= 9; m++ {
			v, _ := strconv.ParseFloat(fmt.Sprintf("%de%d", m, d), 64)
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: v}
			if labelled[m] && (m != 1 || (d-d0)%every == 0) {
				t.Label = strconv.FormatFloat(v, 'g', -1, 64)
				nLabels++
			}
			if every == 1 || t.Label != "" {
				ticks = append(ticks, t)
			}
		}
	}
	if nLabels < 2 {
		ticks = niceTicks{}.Ticks(lo, hi)
	}
	// A log axis cannot place 0 or a negative value (gonum/plot panics):
	// linear ticks from 0, or a decade that underflows, are dropped.
	return slices.DeleteFunc(ticks, func(t plot.Tick) bool { return !(t.Value > 0) || !finite(t.Value) })
}

// niceTicks labels a linear axis every 1, 2 or 5 times a power of ten,
// four to eight labels with as many decimals as the step needs, and minor
// ticks between; integer: no step below 1 (counts of requests).
type niceTicks struct{ integer bool }

func (n niceTicks) Ticks(lo, hi float64) []plot.Tick {
	if !finite(lo) || !finite(hi) || !(hi > lo) {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	step, minor := axisStep((hi - lo) / 5)
	if n.integer && step < 1 {
		step, minor = 1, 1
	}
	decimals := max(0, -int(math.Floor(math.Log10(step)+1e-9)))
	per := int(math.Round(step / minor))
	first, last := math.Ceil(lo/minor-1e-9), math.Floor(hi/minor+1e-9)
	if !(last-first <= 100) || math.Abs(first) > 1<<52 || math.Abs(last) > 1<<52 {
		// Past 2^52, k++ may not move k: a range narrow next to its values.
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	var ticks []plot.Tick
	for k := first; k <= last; k++ {
		t := plot.Tick{Value: k * minor}
		if t.Value == 0 {
			t.Value = 0 // not -0
		}
		if int(k)%per == 0 {
			t.Label = strconv.FormatFloat(t.Value, 'f', decimals, 64)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// axisStep rounds raw to 1, 2 or 5 times a power of ten, and gives the
// minor step under it.
func axisStep(raw float64) (step, minor float64) {
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	switch f := raw / p; {
	case f < 1.5:
		return p, p / 5
	case f < 3.5:
		return 2 * p, p
	case f < 7.5:
		return 5 * p, p
	}
	return 10 * p, 2 * p
}

// clockTicks labels a bar chart of time buckets (bar i centred on x = i,
// bucket i starting at start + i*step) at round UTC clock times: every 1,
// 2 or 5 ms to 500 ms, 1, 2, 5, 10, 15 or 30 s or min, 1, 2, 3, 6 or 12 h,
// or a number of days, about six labels over the span.
type clockTicks struct {
	start time.Time
	step  time.Duration
	n     int
}

func (c clockTicks) Ticks(_, _ float64) []plot.Tick {
	total := time.Duration(c.n) * c.step
	every := clockStep(total / 6)
	end := c.start.Add(total)
	layout := clockLayout(every, c.start, end.Add(-time.Nanosecond))
	var ticks []plot.Tick
	// Truncate rounds since the zero time, a UTC midnight: multiples of a
	// step dividing a day are round clock times.
	for t := c.start.Truncate(every); !t.After(end); t = t.Add(every) {
		if t.Before(c.start) {
			continue
		}
		x := float64(t.Sub(c.start))/float64(c.step) - 0.5
		ticks = append(ticks, plot.Tick{Value: x, Label: t.Format(layout)})
	}
	return ticks
}

// clockSteps are the tick steps of a timeline below a day.
var clockSteps = []time.Duration{
	time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond, 10 * time.Millisecond,
	20 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond,
	500 * time.Millisecond, time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second,
	15 * time.Second, 30 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute,
	10 * time.Minute, 15 * time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour,
	3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour,
}

// clockStep is the first round step of at least d; whole days past a day.
func clockStep(d time.Duration) time.Duration {
	for _, s := range clockSteps {
		if s >= d {
			return s
		}
	}
	day := 24 * time.Hour
	return (d + day - 1) / day * day
}

// clockLayout shows what tells the labels apart: milliseconds for
// sub-second steps, seconds below a minute, the date when the span
// crosses days.
func clockLayout(every time.Duration, start, end time.Time) string {
	layout := "15:04"
	switch {
	case every < time.Second:
		layout = "15:04:05.000"
	case every < time.Minute:
		layout = "15:04:05"
	}
	if start.Format(time.DateOnly) == end.Format(time.DateOnly) {
		return layout
	}
	if every%(24*time.Hour) == 0 {
		return "Jan 2"
	}
	return "Jan 2 " + layout
}

// largest keeps the limit items with the most requests, in their order,
// and says in a title suffix what it left out.
func largest[T any](items []T, limit int, requests func(T) int64) ([]T, string) {
	if len(items) <= limit {
		return items, ""
	}
	idx := make([]int, len(items))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(requests(items[b]), requests(items[a])) })
	idx = idx[:limit]
	slices.Sort(idx)
	out := make([]T, 0, limit)
	for _, i := range idx {
		out = append(out, items[i])
	}
	return out, fmt.Sprintf(" (the %d of %d with most requests)", limit, len(items))
}
