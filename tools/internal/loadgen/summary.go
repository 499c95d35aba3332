// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/llmslo/llmslo/internal/aggregate"
)

// SLO is an objective to judge the truth against: a request is good when
// it did not fail and every set bound holds (inclusive); a value the span
// does not give fails its bound (unknown is never good).
type SLO struct {
	TTFT, TPOT, E2E time.Duration // 0: unset
}

// Good judges t against the SLO.
func (s SLO) Good(t *Truth) bool {
	if t.Error {
		return false
	}
	for _, c := range []struct {
		bound time.Duration
		v     *float64
		na    bool
	}{{s.TTFT, t.TTFT, false}, {s.TPOT, t.TPOT, t.OutputTokens == 1}, {s.E2E, t.E2E, false}} {
		if c.bound == 0 || c.na {
			continue
		}
		if c.v == nil || *c.v > c.bound.Seconds() {
			return false
		}
	}
	return true
}

// Group is the truth of one model and layer.
type Group struct {
	Model, Layer string
	Requests     int
	Errors       int
	Good         int
	TTFT, TPOT   []float64 // sorted
	ITL, E2E     []float64 // sorted; ITL holds every gap
}

// Percentile is numpy's linear percentile of sorted values (NaN if none).
func Percentile(sorted []float64, p float64) float64 { return aggregate.Percentile(sorted, p) }

// Summarize groups truths by model and layer, sorted by model then layer.
func Summarize(truths []Truth, slo SLO) []*Group {
	groups := map[[2]string]*Group{}
	for i := range truths {
		t := &truths[i]
		k := [2]string{t.Model, t.Layer}
		g := groups[k]
		if g == nil {
			g = &Group{Model: t.Model, Layer: t.Layer}
			groups[k] = g
		}
		g.Requests++
		if t.Error {
			g.Errors++
		}
		if slo.Good(t) {
			g.Good++
		}
		if t.TTFT != nil {
			g.TTFT = append(g.TTFT, *t.TTFT)
		}
		if t.TPOT != nil {
			g.TPOT = append(g.TPOT, *t.TPOT)
		}
		if t.E2E != nil {
			g.E2E = append(g.E2E, *t.E2E)
		}
		g.ITL = append(g.ITL, t.ITLGaps...)
	}
	var out []*Group
	for _, g := range groups {
		for _, s := range [][]float64{g.TTFT, g.TPOT, g.ITL, g.E2E} {
			slices.Sort(s)
		}
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Model != out[j].Model {
			return out[i].Model < out[j].Model
		}
		return out[i].Layer < out[j].Layer
	})
	return out
}

func ms3(sorted []float64) string {
	if len(sorted) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f/%.1f/%.1f", 1000*Percentile(sorted, 50), 1000*Percentile(sorted, 90), 1000*Percentile(sorted, 99))
}

// PrintSummary writes the ground-truth table.
func PrintSummary(w io.Writer, groups []*Group, elapsed time.Duration) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MODEL\tLAYER\tREQUESTS\tERRORS\tTTFT p50/90/99 ms\tTPOT p50/90/99 ms\tITL p50/90/99 ms\tE2E p50/90/99 ms\tGOODPUT\tGOOD/s")
	for _, g := range groups {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%.1f%%\t%.2f\n", g.Model, g.Layer, g.Requests, g.Errors,
			ms3(g.TTFT), ms3(g.TPOT), ms3(g.ITL), ms3(g.E2E), 100*float64(g.Good)/float64(g.Requests), float64(g.Good)/elapsed.Seconds())
	}
	_ = tw.Flush()
}
