// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"context"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// corpus generates streamed requests with every shape the definitions
// tell apart: role chunks, empty chunks between content, multi-token
// chunks, chunks without a count, usage chunks, stream tails, missing usage
// counts, one-token outputs and failed requests.
func corpus(seed uint64, n int) []req {
	rng := rand.New(rand.NewPCG(seed, 7))
	var out []req
	for i := range n {
		r := req{id: uint64(i + 1), start: int64(i) * 50 * msec, model: []string{"llama", "qwen"}[i%2], failed: rng.IntN(20) == 0}
		t := int64(0)
		step := func(maxMs int) int64 { t += 1 + rng.Int64N(int64(maxMs)*msec); return t }
		if rng.IntN(2) == 0 {
			r.events = append(r.events, ev{step(300), 0}) // role chunk
		}
		chunks := 1 + rng.IntN(30)
		if rng.IntN(8) == 0 {
			chunks = 1
		}
		var tokens int64
		for c := range chunks {
			at := step(map[bool]int{true: 400, false: 60}[c == 0])
			count := int64(1 + rng.IntN(3))
			if rng.IntN(10) == 0 {
				count = -1 // no count attribute: one token
			}
			r.events = append(r.events, ev{at, count})
			tokens += max(count, 1)
			if c < chunks-1 && rng.IntN(15) == 0 {
				r.events = append(r.events, ev{step(20), 0}) // empty chunk
			}
		}
		if rng.IntN(2) == 0 {
			r.events = append(r.events, ev{step(3), 0}) // usage chunk
		}
		r.end = step(5)
		r.n = tokens
		if rng.IntN(10) == 0 {
			r.n = -1 // no usage count
		}
		out = append(out, r)
	}
	return out
}

// refPercentile is the textbook linear interpolation between order
// statistics (Hyndman-Fan type 7), written independently of numpy's
// two-branch lerp: equal to 1e-9 relative.
func refPercentile(vals []float64, p float64) float64 {
	s := append([]float64(nil), vals...)
	sort.Float64s(s)
	h := float64(len(s)-1) * p / 100
	lo := int(math.Floor(h))
	if lo+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[lo] + (h-float64(lo))*(s[lo+1]-s[lo])
}

func refMedian(vals []float64) float64 {
	s := append([]float64(nil), vals...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func refMean(vals []float64) float64 {
	var sum float64
	for _, v := range vals {
		sum += v
	}
	return sum / float64(len(vals))
}

// refNearest is GuideLLM's weighted nearest rank, from its definition: the
// smallest value whose cumulative weight share reaches q.
func refNearest(vals, weights []float64, q float64) float64 {
	type vw struct{ v, w float64 }
	var xs []vw
	var total float64
	for i := range vals {
		if weights[i] > 0 {
			xs = append(xs, vw{vals[i], weights[i]})
			total += weights[i]
		}
	}
	sort.Slice(xs, func(i, j int) bool { return xs[i].v < xs[j].v })
	var c float64
	for _, x := range xs {
		c += x.w / total
		if c >= q {
			return x.v
		}
	}
	return xs[len(xs)-1].v
}

func refWMean(vals, weights []float64) float64 {
	var s, w float64
	for i := range vals {
		s += vals[i] * weights[i]
		w += weights[i]
	}
	return s / w
}

type refMetric struct {
	vals, weights []float64
	median        bool // P50 is np.median
	nearest       bool // GuideLLM
}

// reference computes every tool's formula from the raw events, as
// metric-definitions.md states it, without the report's stream records.
func reference(reqs []req) map[string]map[string]*refMetric {
	m := map[string]map[string]*refMetric{}
	get := func(tool, metric string) *refMetric {
		if m[tool] == nil {
			m[tool] = map[string]*refMetric{}
		}
		if m[tool][metric] == nil {
			m[tool][metric] = &refMetric{median: tool == "vllm" || tool == "sglang", nearest: tool == "guidellm"}
		}
		return m[tool][metric]
	}
	add := func(tool, metric string, v float64) { x := get(tool, metric); x.vals = append(x.vals, v) }
	addW := func(metric string, v, w float64) {
		x := get("guidellm", metric)
		x.vals, x.weights = append(x.vals, v), append(x.weights, w)
	}
	s := func(ns int64) float64 { return float64(ns) / 1e9 }
	for _, r := range reqs {
		if r.failed {
			continue
		}
		var content []int64
		lastContent := -1
		for i, e := range r.events {
			if e.count != 0 {
				content = append(content, e.at)
				lastContent = i
			}
		}
		choices := r.events[:lastContent+1]
		n := r.n
		usage := n >= 0
		if !usage {
			n = 0
			for _, e := range r.events {
				if e.count != 0 {
					n += max(e.count, 1)
				}
			}
		}
		first, last := content[0], content[len(content)-1]
		// vLLM
		add("vllm", "ttft", s(choices[0].at))
		add("vllm", "e2e", s(last))
		if n > 1 {
			add("vllm", "tpot", (s(last)-s(choices[0].at))/float64(n-1))
		}
		for i := 1; i < len(choices); i++ {
			add("vllm", "itl", s(choices[i].at-choices[i-1].at))
		}
		// AIPerf / GenAI-Perf, integer ns
		add("aiperf", "ttft", float64(first)*1e-9)
		add("aiperf", "e2e", float64(last)*1e-9)
		if len(content) > 1 && n > 1 {
			add("aiperf", "itl", math.RoundToEven(float64(last-first)/float64(n-1))*1e-9)
		}
		// LLMPerf
		sum := s(first)
		for i := 1; i < len(content); i++ {
			sum += s(content[i] - content[i-1])
		}
		add("llmperf", "ttft", s(first))
		add("llmperf", "itl", sum/float64(len(choices)))
		add("llmperf", "e2e", s(r.end))
		// GuideLLM
		gn := n
		if !usage {
			gn = int64(len(content))
		}
		addW("ttft", s(first), 1)
		addW("e2e", s(r.end), 1)
		addW("tpot", s(last)/float64(gn), float64(gn))
		if gn > 1 {
			addW("itl", s(last-first)/float64(gn-1), float64(gn-1))
		}
		// SGLang
		add("sglang", "ttft", s(first))
		add("sglang", "e2e", s(r.end))
		if n > 1 {
			add("sglang", "tpot", (s(r.end)-s(first))/float64(n-1))
		}
		for i := 1; i < len(content); i++ {
			add("sglang", "itl", s(content[i]-content[i-1]))
		}
		// DistServe
		add("distserve", "ttft", s(first))
		add("distserve", "e2e", s(r.end))
		if n == 1 {
			add("distserve", "tpot", 0)
		} else {
			add("distserve", "tpot", s(last-first)/float64(n-1))
		}
		// llmslo: the project's formulas (docs/processor.md, Formulas)
		add("llmslo", "ttft", s(first))
		add("llmslo", "e2e", s(last))
		if n > 1 {
			add("llmslo", "tpot", (s(last)-s(first))/float64(n-1))
		}
		for i := 1; i < len(content); i++ {
			add("llmslo", "itl", s(content[i]-content[i-1]))
		}
	}
	return m
}

func TestDefinitionsMatchIndependentComputation(t *testing.T) {
	reqs := corpus(1, 600)
	td := ptrace.NewTraces()
	for _, r := range reqs {
		chat(td, r)
	}
	e, err := NewEngine(context.Background(), goldenOptions(t))
	require.NoError(t, err)
	require.NoError(t, e.Consume(context.Background(), td))
	require.NoError(t, e.Close(context.Background()))
	r := e.Report(nil)
	ref := reference(reqs)
	ok := 0
	for _, tool := range r.Definitions.Tools {
		require.Len(t, tool.Metrics, len(ref[tool.Tool]), tool.Tool)
		for id, got := range tool.Metrics {
			want := ref[tool.Tool][id]
			require.NotNil(t, want, "%s %s", tool.Tool, id)
			label := tool.Tool + " " + id
			var mean, p50, p90, p99 float64
			count := int64(len(want.vals))
			if want.nearest {
				w := want.weights
				count = 0
				for _, x := range w {
					if x > 0 {
						count++
					}
				}
				mean = refWMean(want.vals, w)
				p50, p90, p99 = refNearest(want.vals, w, 0.5), refNearest(want.vals, w, 0.9), refNearest(want.vals, w, 0.99)
			} else {
				mean = refMean(want.vals)
				p50, p90, p99 = refPercentile(want.vals, 50), refPercentile(want.vals, 90), refPercentile(want.vals, 99)
				if want.median {
					p50 = refMedian(want.vals)
				}
			}
			assert.Equal(t, count, got.Count, label+" count")
			assert.InEpsilon(t, mean, float64(got.Mean), 1e-9, label+" mean")
			assert.InEpsilon(t, p50, float64(got.P50), 1e-9, label+" p50")
			assert.InEpsilon(t, p90, float64(got.P90), 1e-9, label+" p90")
			assert.InEpsilon(t, p99, float64(got.P99), 1e-9, label+" p99")
			ok++
		}
	}
	assert.Equal(t, 25, ok, "metrics compared: 7 tools")
	assert.Greater(t, r.Definitions.Requests, int64(500))
}
