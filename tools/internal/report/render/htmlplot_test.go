// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package render

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// TestPaletteDistinct: the plots' twelve colours stay apart: no two closer
// than 40 in RGB (the nearest pair is 49 apart; Kelly chose them to be told
// apart by eye, which RGB distance only approximates).
func TestPaletteDistinct(t *testing.T) {
	require.Len(t, palette, maxPlotGroups)
	nearest := math.Inf(1)
	for i := range palette {
		for j := range i {
			a, b := palette[i], palette[j]
			dr, dg, db := float64(a.R)-float64(b.R), float64(a.G)-float64(b.G), float64(a.B)-float64(b.B)
			nearest = math.Min(nearest, math.Sqrt(dr*dr+dg*dg+db*db))
		}
	}
	require.Greater(t, nearest, 40.0)
	t.Logf("nearest pair: %.0f apart", nearest)
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

// TestTitlesFit: a title wraps into lines no wider than its plot, a word
// wider than a line (a long SLO name) is cut, at most maxTitleLines; a
// panel's title is shortened to one line.
func TestTitlesFit(t *testing.T) {
	sty := newPlot("", "", "").Title.TextStyle
	width := 4 * vg.Inch
	long := "SLO " + strings.Repeat("very_long_name_", 12) + ": goodput as every threshold is scaled"
	lines := strings.Split(wrapLines(sty, long, width), "\n")
	assert.Len(t, lines, 3)
	for _, l := range lines {
		assert.LessOrEqual(t, sty.Width(l), width, l)
	}
	assert.Equal(t, "SLO interactive: goodput", wrapLines(sty, "SLO interactive: goodput", width), "a title that fits is left alone")
	one := fitLine(sty, strings.Repeat("model-", 40)+"tail", width)
	assert.LessOrEqual(t, sty.Width(one), width)
	assert.True(t, strings.HasSuffix(one, "…del-tail"), "the end kept: %s", one)
	assert.NotPanics(t, func() { wrapLines(sty, strings.Repeat("x", 1<<20), vg.Points(1)) })
}

// TestLegendFits: a group name longer than the legend column is shortened
// in the middle, its start and end kept, and the column stays within
// legendMax; short names keep the least width, so the data areas line up.
func TestLegendFits(t *testing.T) {
	dc := draw.New(vgsvg.New(plotWidth, 3*vg.Inch))
	long := "model=" + strings.Repeat("meta-llama/Llama-3.1-405B-Instruct-FP8-", 4) + "tenant-b"
	l, w := legendOf([]legendEntry{{label: "all"}, {label: long, note: " (12.5% at 0)"}}, dc)
	assert.LessOrEqual(t, w, legendMax, "the column's width")
	assert.Greater(t, w, legendMin, "a long name takes more than the least width")
	short := legendLabel(l, long, "")
	assert.NotEqual(t, long, short)
	assert.True(t, strings.HasSuffix(short, "tenant-b"), "the end kept: %s", short)
	assert.True(t, strings.HasPrefix(short, "model=meta-llama"), "the start kept: %s", short)
	assert.Equal(t, "gpt-4o", legendLabel(l, "gpt-4o", ""), "a name that fits is left alone")
	noted := legendLabel(l, long, " (12.5% at 0)")
	assert.True(t, strings.HasSuffix(noted, "-b (12.5% at 0)"), "the note kept whole after the name's end: %s", noted)
	assert.True(t, strings.HasPrefix(noted, "model="), "the name's start kept: %s", noted)
	assert.Less(t, len(noted), len(long), noted)

	_, w = legendOf([]legendEntry{{label: "all"}, {label: "gpt-4o"}}, dc)
	assert.Equal(t, legendMin, w, "short names: the least width")
	_, w = legendOf(nil, dc)
	assert.Zero(t, w, "no legend, no column")
}
