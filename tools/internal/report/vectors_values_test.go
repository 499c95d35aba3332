// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	llmsloprocessor "github.com/llmslo/llmslo"

	"github.com/llmslo/llmslo/tools/internal/report/schema"
)

// want is a value from metric-definitions.md §10 (ms), NaN for "no value".
type want struct {
	tool, metric, stat string
	ms                 float64
	count              int64
}

func toolStat(t *testing.T, r *Report, tool, metric, stat string) (schema.Num, int64) {
	for _, td := range r.Definitions.Tools {
		if td.Tool != tool {
			continue
		}
		m, ok := td.Metrics[metric]
		require.True(t, ok, "%s has no %s", tool, metric)
		switch stat {
		case "mean":
			return m.Mean, m.Count
		case "p25":
			t.Fatal("p25 is not reported")
		case "p50":
			return m.P50, m.Count
		case "p90":
			return m.P90, m.Count
		case "p99":
			return m.P99, m.Count
		}
	}
	t.Fatalf("no tool %s", tool)
	return 0, 0
}

// TestReferenceVectors checks every tool's value on V1-V4 against the
// numbers metric-definitions.md §10 computes (ms, to 1e-9 relative: the
// tools compute in seconds or ns and the document in ms).
func TestReferenceVectors(t *testing.T) {
	nan := math.NaN()
	cases := map[string][]want{
		"v1": {
			{"vllm", "ttft", "mean", 90, 1}, {"vllm", "tpot", "mean", 27.5, 1},
			{"vllm", "itl", "mean", (10 + 20 + 20 + 30 + 30) / 5.0, 5}, {"vllm", "e2e", "mean", 200, 1},
			{"aiperf", "ttft", "mean", 100, 1}, {"aiperf", "itl", "mean", 25, 1}, {"aiperf", "e2e", "mean", 200, 1},
			{"llmperf", "ttft", "mean", 100, 1}, {"llmperf", "itl", "mean", 200.0 / 6, 1}, {"llmperf", "e2e", "mean", 202, 1},
			{"guidellm", "ttft", "mean", 100, 1}, {"guidellm", "tpot", "mean", 40, 1}, {"guidellm", "itl", "mean", 25, 1},
			{"guidellm", "e2e", "mean", 202, 1},
			{"sglang", "ttft", "mean", 100, 1}, {"sglang", "tpot", "mean", 25.5, 1}, {"sglang", "itl", "mean", 25, 4},
			{"sglang", "e2e", "mean", 202, 1},
			{"distserve", "ttft", "mean", 100, 1}, {"distserve", "tpot", "mean", 25, 1},
			{"llmslo", "ttft", "mean", 100, 1}, {"llmslo", "tpot", "mean", 25, 1}, {"llmslo", "itl", "mean", 25, 4},
			{"llmslo", "e2e", "mean", 200, 1},
		},
		"v2": {
			{"vllm", "ttft", "mean", 90, 1}, {"vllm", "tpot", "mean", nan, 0}, {"vllm", "itl", "mean", 10, 1}, {"vllm", "e2e", "mean", 100, 1},
			{"sglang", "ttft", "mean", 100, 1}, {"sglang", "tpot", "mean", nan, 0}, {"sglang", "itl", "mean", nan, 0}, {"sglang", "e2e", "mean", 102, 1},
			{"aiperf", "ttft", "mean", 100, 1}, {"aiperf", "itl", "mean", nan, 0}, {"aiperf", "e2e", "mean", 100, 1},
			{"llmperf", "ttft", "mean", 100, 1}, {"llmperf", "itl", "mean", 50, 1}, {"llmperf", "e2e", "mean", 102, 1},
			{"guidellm", "ttft", "mean", 100, 1}, {"guidellm", "tpot", "mean", 100, 1}, {"guidellm", "itl", "mean", nan, 0},
			{"guidellm", "e2e", "mean", 102, 1},
			{"distserve", "ttft", "mean", 100, 1}, {"distserve", "tpot", "mean", 0, 1},
			{"llmslo", "tpot", "mean", nan, 0}, {"llmslo", "itl", "mean", nan, 0},
		},
		"v3": {
			{"vllm", "ttft", "mean", 100, 1}, {"vllm", "tpot", "mean", 12.5, 1}, {"vllm", "itl", "mean", 25, 2}, {"vllm", "e2e", "mean", 150, 1},
			{"sglang", "tpot", "mean", 13, 1}, {"sglang", "itl", "mean", 25, 2}, {"sglang", "e2e", "mean", 152, 1},
			{"aiperf", "ttft", "mean", 100, 1}, {"aiperf", "itl", "mean", 12.5, 1}, {"aiperf", "e2e", "mean", 150, 1},
			{"llmperf", "itl", "mean", 50, 1}, {"llmperf", "e2e", "mean", 152, 1},
			{"guidellm", "tpot", "mean", 30, 1}, {"guidellm", "itl", "mean", 12.5, 1}, {"guidellm", "e2e", "mean", 152, 1},
			{"distserve", "tpot", "mean", 12.5, 1},
			{"llmslo", "ttft", "mean", 100, 1}, {"llmslo", "tpot", "mean", 12.5, 1}, {"llmslo", "itl", "mean", 25, 2},
		},
		// GenAI-Perf rounds half to even in ns: round(2.5) = 2, round(11/3) = 4.
		"v4_rounding": {
			{"aiperf", "itl", "mean", 3e-6, 2}, {"aiperf", "itl", "p50", 3e-6, 2}, {"aiperf", "ttft", "mean", 2e-6, 2},
		},
		"v4_percentiles": {
			{"vllm", "ttft", "p50", 25, 4}, {"vllm", "ttft", "p90", 37, 4}, {"vllm", "ttft", "p99", 39.7, 4},
			{"aiperf", "ttft", "p50", 25, 4}, {"aiperf", "ttft", "p99", 39.7, 4},
			{"llmperf", "ttft", "p50", 25, 4}, {"sglang", "ttft", "p50", 25, 4},
			{"guidellm", "ttft", "p50", 20, 4}, {"guidellm", "ttft", "p90", 40, 4}, {"guidellm", "ttft", "p99", 40, 4},
			{"guidellm", "ttft", "mean", 25, 4},
		},
		"v4_weighted": {
			{"guidellm", "itl", "mean", 25, 2}, {"guidellm", "itl", "p50", 30, 2}, {"guidellm", "itl", "p99", 30, 2},
			// numpy, unweighted, on the same per-request values [10, 30]:
			{"aiperf", "itl", "mean", 20, 2}, {"aiperf", "itl", "p50", 20, 2},
		},
	}
	for name, wants := range cases {
		t.Run(name, func(t *testing.T) {
			r := runFiles(t, goldenOptions(t), filepath.Join("testdata/vectors", name+".json"))
			for _, w := range wants {
				got, n := toolStat(t, r, w.tool, w.metric, w.stat)
				label := fmt.Sprintf("%s %s %s", w.tool, w.metric, w.stat)
				assert.Equal(t, w.count, n, label+" count")
				if math.IsNaN(w.ms) {
					assert.False(t, got.Valid(), label)
					continue
				}
				assert.InEpsilon(t, w.ms/1e3+1e-300, float64(got)+1e-300, 1e-9, label)
			}
		})
	}
}

// TestTokenAwareV3: with token_aware_itl the processor's gaps for V3 are
// [10, 10, 10, 20] ms (a 3-token chunk spreads its 30 ms gap).
func TestTokenAwareV3(t *testing.T) {
	opts := goldenOptionsWith(t, func(cfg *llmsloprocessor.Config) { cfg.TokenAwareITL = true })
	r := runFiles(t, opts, "testdata/vectors/v3.json")
	m := r.Latency[0].Metrics["itl"]
	assert.Equal(t, int64(4), m.Count)
	assert.InEpsilon(t, 0.0125, float64(m.Mean), 1e-12)
	assert.InEpsilon(t, 0.010, float64(m.P50), 1e-12)
	assert.InEpsilon(t, 0.020, float64(m.Max), 1e-12)
}

// TestNumpyMicroVectors: the percentile and median rules of §8 bit for bit.
func TestNumpyMicroVectors(t *testing.T) {
	x := []float64{10, 20, 30, 40}
	assert.Equal(t, 17.5, npPercentile(x, 25))
	assert.Equal(t, 25.0, npPercentile(x, 50))
	assert.Equal(t, 37.0, npPercentile(x, 90))
	assert.Equal(t, 38.5, npPercentile(x, 95))
	assert.Equal(t, 39.699999999999996, npPercentile(x, 99))
	assert.Equal(t, 25.0, npMedian(x))
	nr := newNearestRank(x, []float64{1, 1, 1, 1})
	for q, v := range map[float64]float64{0.25: 10, 0.5: 20, 0.9: 40, 0.95: 40, 0.99: 40} {
		assert.Equal(t, v, nr.percentile(q), "GuideLLM p%v", q*100)
	}
	w := newNearestRank([]float64{10, 30}, []float64{1, 3})
	assert.Equal(t, 25.0, w.mean)
	assert.Equal(t, 10.0, w.percentile(0.25))
	assert.Equal(t, 30.0, w.percentile(0.5))
	assert.Equal(t, 30.0, w.percentile(0.99))
}
