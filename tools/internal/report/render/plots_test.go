// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package render

import (
	"bytes"
	"fmt"
	"image/color"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmslo/llmslo/tools/internal/report/schema"
)

// plotReport has three groups, a, b and c, in that order; b has no TTFT
// (a producer that does not emit it), c's queue times are all 0, and a's
// are 0 for 2,082 of its 3,000 requests, of which the CDF keeps a thinned
// sample of 1,000 points with 694 zeros.
func plotReport() *schema.Report {
	g := func(name string) schema.Group { return schema.Group{"model": name} }
	r := &schema.Report{GroupBy: []string{"model"}}
	r.Latency = []schema.LatencyGroup{{Requests: 6000}, {Group: g("a"), Requests: 3000}, {Group: g("b"), Requests: 2000}, {Group: g("c"), Requests: 1000}}
	// the CDFs keep a thinned sample of 1,000 points
	const n = 1000
	rising := func(zeros int) []float64 {
		v := make([]float64, n)
		for i := zeros; i < n; i++ {
			v[i] = 0.001 * float64(i-zeros+1)
		}
		return v
	}
	r.CDFs = []schema.CDF{
		{Metric: "ttft", Group: g("a"), Requests: 3000, Sorted: rising(0), Values: 3000},
		{Metric: "ttft", Group: g("c"), Requests: 1000, Sorted: rising(0), Values: 1000},
		{Metric: "queue_time", Group: g("a"), Requests: 3000, Sorted: rising(694), Values: 3000, Zeros: 2082},
		{Metric: "queue_time", Group: g("c"), Requests: 1000, Sorted: rising(1000), Values: 1000, Zeros: 1000},
	}
	return r
}

func hex(c color.Color) string {
	r, g, b, _ := c.RGBA()
	return fmt.Sprintf("stroke:#%02X%02X%02X", r>>8, g>>8, b>>8)
}

// TestCDFZerosCountRequests: the axis counts the requests at 0 (2,082 +
// 1,000), not the thinned points (694 + 1,000); the legend gives each
// group's share, and a group of zeros only is in the legend.
func TestCDFZerosCountRequests(t *testing.T) {
	svg, ok := cdfPlot(plotReport(), "queue_time")
	require.True(t, ok)
	s := string(svg)
	assert.Contains(t, s, "queue_time (ms, log scale): 3082 requests at 0 ms not drawn")
	assert.Contains(t, s, "a (69.4% at 0)")
	assert.Contains(t, s, "c (all at 0)")
	assert.NotContains(t, s, "1694")
}

// TestGroupColoursStable: a group keeps its colour from plot to plot: c is
// palette[3] in the TTFT plot, where b has no curve, as in the report's
// group order ("all" first), and b's colour is in no curve.
func TestGroupColoursStable(t *testing.T) {
	r := plotReport()
	colour := groupColours(r)
	assert.Equal(t, palette[0], colour(schema.Group{}))
	assert.Equal(t, palette[1], colour(schema.Group{"model": "a"}))
	assert.Equal(t, palette[3], colour(schema.Group{"model": "c"}))
	svg, ok := cdfPlot(r, "ttft")
	require.True(t, ok)
	assert.Contains(t, string(svg), hex(palette[1]))
	assert.Contains(t, string(svg), hex(palette[3]))
	assert.NotContains(t, string(svg), hex(palette[2]), "b's colour: b has no TTFT")
}

// TestViolationsOrder: the HTML lists an SLO's violations by count, as
// the text does, not alphabetically.
func TestViolationsOrder(t *testing.T) {
	r := plotReport()
	r.CDFs = nil
	r.SLOs = []schema.SLOReport{{Name: "interactive", Constraints: map[string]float64{"ttft": 0.5},
		Groups: []schema.SLOGroup{{Requests: 300, Violated: 230, Violations: map[string]int64{"e2e": 92, "error": 8, "tpot": 94, "ttft": 35}}}}}
	var text, html bytes.Buffer
	require.NoError(t, WriteText(&text, r))
	require.NoError(t, WriteHTML(&html, r))
	assert.Contains(t, text.String(), "Violations by constraint: tpot 94, e2e 92, ttft 35, error 8.")
	assert.Contains(t, html.String(), "<p>Violations: tpot 94; e2e 92; ttft 35; error 8; </p>")
}

// TestPlotsUseThePageWidth: the plots scale to the page's column, as wide
// as 1500px, instead of stopping at their drawn width (half a wide page).
func TestPlotsUseThePageWidth(t *testing.T) {
	var html bytes.Buffer
	require.NoError(t, WriteHTML(&html, plotReport()))
	style := html.String()[:strings.Index(html.String(), "</style>")]
	assert.Contains(t, style, "max-width:1500px")
	assert.Contains(t, style, "svg{display:block;margin:.8em 0;width:100%;height:auto}")
}
