// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package render

import (
	"bytes"
	"html/template"
	"image/color"
	"strings"
	"unicode/utf8"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Past maxPlotGroups, colours can no longer tell curves apart: a plot of
// more groups becomes small multiples, one panel per group on the same
// axes, its curve in one colour (the sweep's over every request's, in
// grey). The panels are the groups with the most requests, at most
// maxPanels, so the page stays bounded whatever --max-groups allows; the
// tables list every group.
const (
	maxPanels   = 48
	panelCols   = 4
	panelHeight = 1.7 * vg.Inch
	// panelPoints thins each panel's curve: a panel is a quarter of the
	// page's width.
	panelPoints = 100
)

// panelColour draws a panel's group, lightGrey the reference curve.
var (
	panelColour = palette[0]
	lightGrey   = color.RGBA{R: 0xc8, G: 0xc8, B: 0xc8, A: 0xff}
)

// newPanel is one small multiple: a plot with a one-line title, small
// ticks and no axis labels (the figure's note names the axes).
func newPanel(title string) *plot.Plot {
	p := newPlot("", "", "")
	p.Title.TextStyle.Font = sans(9).Font
	p.Title.Padding = vg.Points(2)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Tick.Label.Font = sans(7).Font
		a.Padding = vg.Points(2)
	}
	p.Title.Text = fitLine(p.Title.TextStyle, title, plotWidth/panelCols-vg.Points(8))
	return p
}

// renderPanels draws panels in rows of panelCols under the figure's title
// and a note on how to read it, as inline SVG.
func renderPanels(title, note string, panels []*plot.Plot) template.HTML {
	titleSty := newPlot("", "", "").Title.TextStyle
	titleSty.Font = sans(13).Font
	noteSty := titleSty
	noteSty.Font = sans(10).Font
	title = wrapLines(titleSty, title, plotWidth-vg.Points(20))
	note = wrapLines(noteSty, note, plotWidth-vg.Points(20))
	head := titleSty.Height(title) + noteSty.Height(note) + vg.Points(8)
	rows := (len(panels) + panelCols - 1) / panelCols
	c := vgsvg.New(plotWidth, head+vg.Length(rows)*panelHeight)
	dc := draw.New(c)
	top := dc.Max.Y
	dc.FillText(titleSty, vg.Point{X: dc.Center().X, Y: top}, title)
	dc.FillText(noteSty, vg.Point{X: dc.Center().X, Y: top - titleSty.Height(title) - vg.Points(2)}, note)
	tiles := draw.Tiles{Rows: rows, Cols: panelCols, PadX: vg.Points(6), PadY: vg.Points(6), PadTop: head, PadLeft: vg.Points(4)}
	for i, p := range panels {
		p.Draw(tiles.At(dc, i%panelCols, i/panelCols))
	}
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return template.HTML(template.HTMLEscapeString(err.Error()))
	}
	return svgMarkup(b.String())
}

// fewerLabels keeps at most n of a ticker's labels, evenly spread (the
// others stay as unlabelled ticks), for axes a panel's width cannot hold.
type fewerLabels struct {
	plot.Ticker
	n int
}

func (f fewerLabels) Ticks(lo, hi float64) []plot.Tick {
	ticks := f.Ticker.Ticks(lo, hi)
	var labelled []int
	for i, t := range ticks {
		if t.Label != "" {
			labelled = append(labelled, i)
		}
	}
	every := (len(labelled) + f.n - 1) / max(1, f.n)
	for k, i := range labelled {
		if every > 1 && k%every != 0 {
			ticks[i].Label = ""
		}
	}
	return ticks
}

// maxTitleRunes bounds what a title is measured from: a group name is a
// span's attribute value, of any length.
const maxTitleRunes = 200

// fitLine shortens s, keeping its end as truncate does, until it fits
// width on one line.
func fitLine(sty text.Style, s string, width vg.Length) string {
	s = truncate(strings.Join(strings.Fields(s), " "), maxTitleRunes)
	lo, hi := 1, utf8.RuneCountInString(s) // the longest that fits is in [lo, hi]
	if sty.Width(s) <= width {
		return s
	}
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if sty.Width(truncate(s, mid)) <= width {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return truncate(s, lo)
}

// maxTitleLines bounds a wrapped title; past it the last line is cut.
const maxTitleLines = 3

// wrapLines breaks s into lines that fit width (a word wider than a line,
// such as a long SLO name, is cut), so a long title is not clipped by the
// edge of its plot.
func wrapLines(sty text.Style, s string, width vg.Length) string {
	words := strings.Fields(truncate(s, maxTitleRunes))
	var lines []string
	line := ""
	for len(words) > 0 {
		w := words[0]
		switch try := strings.TrimSpace(line + " " + w); {
		case sty.Width(try) <= width:
			line, words = try, words[1:]
		case line != "":
			lines, line = append(lines, line), ""
		default: // one word wider than a line: cut it where it stops fitting
			n := fitRunes(sty, w, width)
			rs := []rune(w)
			lines, words[0] = append(lines, string(rs[:n])), string(rs[n:])
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	if len(lines) > maxTitleLines {
		last := strings.Join(lines[maxTitleLines-1:], " ")
		lines = append(lines[:maxTitleLines-1], fitLine(sty, last, width))
	}
	return strings.Join(lines, "\n")
}

// fitRunes is how many of w's first runes fit width (at least one).
func fitRunes(sty text.Style, w string, width vg.Length) int {
	rs := []rune(w)
	n := 1
	for n < len(rs) && sty.Width(string(rs[:n+1])) <= width {
		n++
	}
	return n
}
