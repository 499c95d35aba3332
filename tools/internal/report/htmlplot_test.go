// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmslo/llmslo/tools/internal/report/render"
)

// svgPlot is what the tests read back from one plot's SVG: its texts and
// stroked paths, in SVG coordinates with y up (vgsvg flips the page).
type svgPlot struct {
	texts []svgText
	paths []svgPath
}

type svgText struct {
	x, y float64
	s    string
}

type svgPath struct {
	style string
	pts   [][2]float64
}

var (
	svgTextRe  = regexp.MustCompile(`<text x="([^"]+)" y="([^"]+)"[^>]*>([^<]*)</text>`)
	svgPathRe  = regexp.MustCompile(`<path d="([^"]*)"\s*style="([^"]*)"`)
	svgPointRe = regexp.MustCompile(`[ML](-?[0-9.e+-]+),(-?[0-9.e+-]+)`)
)

func parseSVG(t *testing.T, svg string) svgPlot {
	t.Helper()
	num := func(s string) float64 {
		v, err := strconv.ParseFloat(s, 64)
		require.NoError(t, err, s)
		return v
	}
	var p svgPlot
	for _, m := range svgTextRe.FindAllStringSubmatch(svg, -1) {
		p.texts = append(p.texts, svgText{num(m[1]), -num(m[2]), m[3]})
	}
	for _, m := range svgPathRe.FindAllStringSubmatch(svg, -1) {
		path := svgPath{style: m[2]}
		for _, pt := range svgPointRe.FindAllStringSubmatch(m[1], -1) {
			path.pts = append(path.pts, [2]float64{num(pt[1]), num(pt[2])})
		}
		p.paths = append(p.paths, path)
	}
	return p
}

// dataArea is the box of the grid's lines (gonum/plot's grey #808080),
// which span the data area.
func (p svgPlot) dataArea(t *testing.T) (x0, y0, x1, y1 float64) {
	t.Helper()
	x0, y0, x1, y1 = math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, path := range p.paths {
		if !strings.Contains(path.style, "stroke:#808080") {
			continue
		}
		for _, pt := range path.pts {
			x0, y0, x1, y1 = min(x0, pt[0]), min(y0, pt[1]), max(x1, pt[0]), max(y1, pt[1])
		}
	}
	require.Less(t, x0, x1, "no grid")
	return x0, y0, x1, y1
}

func (p svgPlot) text(s string) (svgText, bool) {
	for _, tx := range p.texts {
		if tx.s == s {
			return tx, true
		}
	}
	return svgText{}, false
}

// plotWith is the parsed SVG of the page's plot whose title is title.
func plotWith(t *testing.T, page, title string) svgPlot {
	t.Helper()
	for _, svg := range strings.SplitAfter(page, "</svg>") {
		if strings.Contains(svg, ">"+title) {
			return parseSVG(t, svg[strings.Index(svg, "<svg"):])
		}
	}
	require.Failf(t, "no plot", "titled %q", title)
	return svgPlot{}
}

// groupsPage renders the HTML report of the generated corpus spread over
// n models, grouped by model.
func groupsPage(t *testing.T, n int) string {
	t.Helper()
	td := ptrace.NewTraces()
	for i, r := range corpus(3, 100*n) {
		r.model = fmt.Sprintf("model-%02d", i%n)
		chat(td, r)
	}
	opts := goldenOptions(t)
	opts.By = []string{"model"}
	e, err := NewEngine(context.Background(), opts)
	require.NoError(t, err)
	require.NoError(t, e.Consume(context.Background(), td))
	require.NoError(t, e.Close(context.Background()))
	var b bytes.Buffer
	require.NoError(t, render.WriteHTML(&b, e.Report([]string{"corpus"})))
	return b.String()
}

// TestPlotLegendOutside: in every kind of plot, each legend entry's text
// lies right of the data area, so no entry covers a curve or a bar.
func TestPlotLegendOutside(t *testing.T) {
	page := groupsPage(t, 3)
	for title, labels := range map[string][]string{
		"ttft CDF by group":                      {"model-00", "model-01", "model-02"},
		"SLO interactive: goodput as every":      {"all", "model-00", "model-02"},
		"SLO interactive: verdicts over time":    {"met", "violated", "unknown"},
		"&#34;tpot&#34; as each tool defines it": {"mean", "p50", "p99"},
	} {
		p := plotWith(t, page, title)
		_, _, x1, _ := p.dataArea(t)
		for _, l := range labels {
			tx, ok := p.text(l)
			require.True(t, ok, "%s: legend entry %q", title, l)
			assert.Greater(t, tx.x, x1+20, "%s: legend entry %q starts right of the data area (and its thumbnail)", title, l)
		}
	}
}

// TestPlotSmallMultiples: past twelve groups (the palette's colours) a
// plot becomes small multiples, a panel per group titled by it, every
// curve in one colour; past maxPanels groups, those with most requests,
// and the title says so.
func TestPlotSmallMultiples(t *testing.T) {
	for _, c := range []struct {
		groups, panels int
		title          string
	}{
		{14, 14, "ttft CDF by group, one panel each"},
		{60, 48, "ttft CDF by group, one panel each (the 48 of 60 with most requests)"},
	} {
		page := groupsPage(t, c.groups)
		p := plotWith(t, page, c.title)
		x0, y0, x1, y1 := p.dataArea(t)
		colours := map[string]bool{}
		for _, path := range p.paths {
			stroke := regexp.MustCompile(`stroke:(#[0-9A-F]{6});stroke-width:1.5`).FindStringSubmatch(path.style)
			if stroke == nil || len(path.pts) < 2 {
				continue
			}
			colours[stroke[1]] = true
			for _, pt := range path.pts {
				assert.True(t, pt[0] >= x0-1 && pt[0] <= x1+1 && pt[1] >= y0-1 && pt[1] <= y1+1, "curves inside the panels")
			}
		}
		assert.Len(t, colours, 1, "%d groups: one colour, a panel each: %v", c.groups, colours)
		panels := 0
		for g := range c.groups {
			if tx, ok := p.text(fmt.Sprintf("model-%02d", g)); ok {
				panels++
				assert.True(t, tx.x > x0 && tx.x < x1, "panel title %s over the panels, not clipped", tx.s)
			}
		}
		assert.Equal(t, c.panels, panels, "%d groups: panels titled by their group", c.groups)
		sweep := plotWith(t, page, "SLO interactive: goodput as every threshold is scaled, one panel per group")
		_, ok := sweep.text("model-00")
		assert.True(t, ok, "the sweep too")
	}
}

// TestTimelineClockTicks: the timeline's x axis reads UTC clock times,
// in order, under the data area.
func TestTimelineClockTicks(t *testing.T) {
	p := plotWith(t, groupsPage(t, 2), "SLO interactive: verdicts over time")
	_, y0, _, _ := p.dataArea(t)
	clock := regexp.MustCompile(`^\d\d:\d\d:\d\d$`)
	var last svgText
	n := 0
	for _, tx := range p.texts {
		if tx.y > y0 || !clock.MatchString(tx.s) {
			continue
		}
		if n > 0 {
			assert.Greater(t, tx.x, last.x, tx.s)
			assert.Greater(t, tx.s, last.s)
		}
		last = tx
		n++
	}
	assert.GreaterOrEqual(t, n, 3, "clock-time tick labels")
}
