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
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
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
	require.NoError(t, WriteHTML(&b, e.Report([]string{"corpus"})))
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

// TestPlotTwelveColours: with 14 groups, a CDF draws the 12 with most
// requests, each in its own colour, and its title says so.
func TestPlotTwelveColours(t *testing.T) {
	page := groupsPage(t, 14)
	p := plotWith(t, page, "ttft CDF by group")
	x0, y0, x1, y1 := p.dataArea(t)
	colours := map[string]bool{}
	for _, path := range p.paths {
		stroke := regexp.MustCompile(`stroke:(#[0-9A-F]{6});stroke-width:1.5`).FindStringSubmatch(path.style)
		if stroke == nil || len(path.pts) < 2 {
			continue
		}
		inside := true
		for _, pt := range path.pts {
			inside = inside && pt[0] >= x0-1 && pt[0] <= x1+1 && pt[1] >= y0-1 && pt[1] <= y1+1
		}
		if inside {
			colours[stroke[1]] = true
		}
	}
	assert.Len(t, colours, 12, "twelve curves, twelve colours: %v", colours)
	_, ok := p.text("ttft CDF by group (the 12 of 14 with most requests)")
	assert.True(t, ok, "the title says what is left out")
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

// TestClockTicks: round UTC times whatever the bucket width, with the date
// when the span crosses days, milliseconds below a second.
func TestClockTicks(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		require.NoError(t, err)
		return v
	}
	for _, tc := range []struct {
		ticks clockTicks
		want  []string
	}{
		{clockTicks{at("2001-09-09T01:46:40Z"), 5000 * time.Second, 35}, []string{"Sep 9 12:00", "Sep 10 00:00", "Sep 10 12:00", "Sep 11 00:00"}},
		{clockTicks{at("2026-01-01T00:00:00Z"), time.Second, 41}, []string{"00:00:00", "00:00:10", "00:00:20", "00:00:30", "00:00:40"}},
		{clockTicks{at("2026-01-01T00:00:00.013Z"), 20 * time.Millisecond, 10}, []string{"00:00:00.050", "00:00:00.100", "00:00:00.150", "00:00:00.200"}},
		{clockTicks{at("2026-01-01T10:07:00Z"), time.Minute, 60}, []string{"10:10", "10:20", "10:30", "10:40", "10:50", "11:00"}},
		{clockTicks{at("2026-01-01T00:00:00Z"), 24 * time.Hour, 30}, []string{"Jan 5", "Jan 10", "Jan 15", "Jan 20", "Jan 25", "Jan 30"}},
	} {
		var got []string
		for _, tk := range tc.ticks.Ticks(0, 0) {
			got = append(got, tk.Label)
			assert.GreaterOrEqual(t, tk.Value, -0.5)
			assert.LessOrEqual(t, tk.Value, float64(tc.ticks.n)-0.5)
		}
		assert.Equal(t, tc.want, got)
	}
}

// TestAxisTicks: log axes carry several labels over any range (never one),
// linear axes 1-2-5 steps with no "-0" and no needless decimals.
func TestAxisTicks(t *testing.T) {
	for _, r := range [][2]float64{{0.003, 600}, {0.08, 55}, {1000, 1050}, {50, 250}, {0.1, 0.4}, {1e-3, 1e9}, {0.42, 0.43}} {
		var got []string
		for _, tk := range (logTicks{}).Ticks(r[0], r[1]) {
			if tk.Label != "" {
				got = append(got, tk.Label)
				assert.True(t, tk.Value >= r[0] && tk.Value <= r[1], "%v in %v", tk.Value, r)
			}
		}
		assert.GreaterOrEqual(t, len(got), 3, "%v: %v", r, got)
	}
	// Subnormal milliseconds (math.Log10 is off there): no tick at 0.
	for _, tk := range (logTicks{}).Ticks(2.47e-321, 9.88e-321) {
		assert.Greater(t, tk.Value, 0.0)
	}
	lin := func(n niceTicks, lo, hi float64) (got []string) {
		for _, tk := range n.Ticks(lo, hi) {
			if tk.Label != "" {
				got = append(got, tk.Label)
			}
		}
		return got
	}
	assert.Equal(t, []string{"0", "50", "100", "150", "200", "250"}, lin(niceTicks{}, 0, 294))
	assert.Equal(t, []string{"0.0", "0.2", "0.4", "0.6", "0.8", "1.0"}, lin(niceTicks{}, 0, 1.02))
	assert.Equal(t, []string{"0", "1"}, lin(niceTicks{integer: true}, 0, 1.05))
	assert.Equal(t, []string{"0", "5", "10", "15", "20"}, lin(niceTicks{integer: true}, 0, 21))
	// A range narrow next to its values (k past 2^52) and one past float64.
	assert.NotEmpty(t, lin(niceTicks{}, 1e20, 1e20+1e5))
	assert.NotPanics(t, func() { niceTicks{}.Ticks(-math.MaxFloat64, math.MaxFloat64) })
}
