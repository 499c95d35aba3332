// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

type numpyCase struct {
	NS          []int64            `json:"ns"`
	Mean        float64            `json:"mean"`
	Median      float64            `json:"median"`
	Percentiles map[string]float64 `json:"percentiles"`
}

func loadNumpy(t *testing.T) []numpyCase {
	b, err := os.ReadFile("testdata/numpy_fixture.json")
	require.NoError(t, err)
	var f struct {
		Cases []numpyCase `json:"cases"`
	}
	require.NoError(t, json.Unmarshal(b, &f))
	require.NotEmpty(t, f.Cases)
	return f.Cases
}

// TestNumpyFixture: mean, median and percentiles equal numpy's bit for bit
// (the fixture was written by numpy itself: testdata/numpy_fixture.py).
func TestNumpyFixture(t *testing.T) {
	for _, c := range loadNumpy(t) {
		vals := make([]float64, len(c.NS))
		for i, ns := range c.NS {
			vals[i] = nanos(ns)
		}
		assert.Equal(t, c.Mean, npMean(vals), "mean of %d", len(vals))
		s := slices.Clone(vals)
		slices.Sort(s)
		assert.Equal(t, c.Median, npMedian(s), "median of %d", len(vals))
		for _, p := range []struct {
			key string
			p   float64
		}{{"50", 50}, {"90", 90}, {"99", 99}, {"99.9", 99.9}} {
			assert.Equal(t, c.Percentiles[p.key], npPercentile(s, p.p), "p%s of %d", p.key, len(vals))
		}
	}
}

// TestReportPercentilesAreNumpy: spans whose TTFTs are the fixture's values
// give, through the processor and the report, numpy's numbers exactly.
func TestReportPercentilesAreNumpy(t *testing.T) {
	for _, c := range loadNumpy(t) {
		if len(c.NS) < 100 {
			continue
		}
		td := ptrace.NewTraces()
		for i, ns := range c.NS {
			chat(td, req{id: uint64(i + 1), n: 1, start: int64(i) * msec, end: ns, events: []ev{{ns, 1}}})
		}
		e, err := NewEngine(context.Background(), goldenOptions(t))
		require.NoError(t, err)
		require.NoError(t, e.Consume(context.Background(), td))
		require.NoError(t, e.Close(context.Background()))
		r := e.Report(nil)
		m := r.Latency[0].Metrics["ttft"]
		assert.Equal(t, int64(len(c.NS)), m.Count)
		assert.Equal(t, c.Mean, float64(m.Mean), "mean of %d", len(c.NS))
		assert.Equal(t, c.Percentiles["50"], float64(m.P50))
		assert.Equal(t, c.Percentiles["90"], float64(m.P90))
		assert.Equal(t, c.Percentiles["99"], float64(m.P99))
		assert.Equal(t, c.Percentiles["99.9"], float64(m.P999))
		// vLLM's median is np.median, its P99 np.percentile: here TTFT is
		// the only chunk, so vLLM's TTFT is the same values.
		for _, td := range r.Definitions.Tools {
			if td.Tool == "vllm" {
				assert.Equal(t, c.Median, float64(td.Metrics["ttft"].P50))
				assert.Equal(t, c.Percentiles["99"], float64(td.Metrics["ttft"].P99))
			}
		}
	}
}
