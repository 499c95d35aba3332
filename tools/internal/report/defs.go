// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"math"
	"slices"
	"sort"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmslo/llmslo/internal/derive"
	"github.com/llmslo/llmslo/tools/internal/report/schema"
)

// The definitions side by side. A benchmark client sees a stream of SSE
// events; a span with chunk events records the same stream, so each tool's
// formulas (shared/reference/metric-definitions.md, from each tool's source)
// can be applied to it. How the span's events stand for the SSE events:
//
//   - a chunk event with a token count of 0 before the first output is an
//     empty "choices" chunk (the chat role chunk);
//   - a chunk event with output (a count > 0, or no count) is a content
//     chunk; a count-0 event between two of them is an empty choices chunk;
//   - count-0 events after the last output stand for the usage chunk
//     (choices: []), which only clients that ask for usage see, and which
//     no tool times;
//   - the span's end stands for [DONE] and the stream's close (the
//     producer's span ends when the stream does);
//   - N is the producer's usage count (llm.output_tokens): tools that
//     re-tokenize the text (GenAI-Perf, LLMPerf) are assumed to count the
//     same tokens; GuideLLM without a usage count counts content chunks.
//
// Only successful requests with at least one content chunk event are used
// (every tool drops failed requests), and all tools see the same requests.

// streamRec is the stream timing of one request, in ns since its start.
type streamRec struct {
	rec                           int32 // index of the request's record
	events, contents              int32 // choices chunks (role included), content chunks
	firstChoice, first, last, end int64
	n                             int64 // output tokens
	usage                         bool  // n is the producer's usage count
}

// streamOf is the stream timing of a span with chunk events (times and
// counts); false when none of them carries output, and the request is not
// in the definitions. rec is left for apply to set.
func streamOf(span ptrace.Span, source string, outTokens int32, times, counts []int64) (streamRec, bool) {
	firstC, lastC := -1, -1
	var tokens int64
	contents := int32(0)
	for i, c := range counts {
		if c != 0 {
			if firstC < 0 {
				firstC = i
			}
			lastC = i
			contents++
			tokens += max(c, 1)
		}
	}
	if firstC < 0 {
		return streamRec{}, false
	}
	n := int64(outTokens)
	if n < 0 {
		n = tokens
	}
	start := int64(span.StartTimestamp())
	return streamRec{
		events: int32(lastC + 1), contents: contents,
		firstChoice: times[0] - start, first: times[firstC] - start, last: times[lastC] - start,
		end: int64(span.EndTimestamp()) - start,
		n:   n, usage: outTokens >= 0 && !strings.Contains(source, derive.QualifierOutputTokensFromChunks),
	}, true
}

// chunks returns the span's chunk events (times in Unix ns, token counts,
// -1 where the event has none), sorted by time; false when there are none
// or when one lies outside the span (timing the processor does not trust
// either).
func (e *Engine) chunks(span ptrace.Span, presetName string, times, counts []int64) ([]int64, []int64, bool) {
	ev := e.events[presetName]
	evs := span.Events()
	start, end := int64(span.StartTimestamp()), int64(span.EndTimestamp())
	if ev == nil || len(ev.Chunk) == 0 || evs.Len() == 0 || start <= 0 || end < start {
		return times, counts, false
	}
	from := len(times)
	for i := 0; i < evs.Len(); i++ {
		x := evs.At(i)
		if !e.eventNames[x.Name()] || !slices.Contains(ev.Chunk, x.Name()) {
			continue
		}
		ts := int64(x.Timestamp())
		if ts < start || ts > end {
			return times, counts, false
		}
		times, counts = append(times, ts), append(counts, chunkCount(x.Attributes(), ev.TokenCount))
	}
	// OTLP gives the order of events no meaning: sort by time, stably (in
	// n log n: a hostile span's events in reverse order cost no more).
	if t := times[from:]; !slices.IsSorted(t) {
		sort.Stable(byTime{t, counts[from:]})
	}
	return times, counts, len(times) > from
}

// byTime sorts chunk events by time, their counts alongside.
type byTime struct{ times, counts []int64 }

func (b byTime) Len() int           { return len(b.times) }
func (b byTime) Less(i, j int) bool { return b.times[i] < b.times[j] }
func (b byTime) Swap(i, j int) {
	b.times[i], b.times[j] = b.times[j], b.times[i]
	b.counts[i], b.counts[j] = b.counts[j], b.counts[i]
}

// chunkCount is a chunk event's token count, -1 when it does not say.
func chunkCount(attrs pcommon.Map, key string) int64 {
	if key == "" {
		return -1
	}
	a, ok := attrs.Get(key)
	if !ok {
		return -1
	}
	count := int64(-1)
	switch a.Type() {
	case pcommon.ValueTypeInt:
		count = a.Int()
	case pcommon.ValueTypeDouble:
		count = int64(a.Double())
	}
	return max(count, -1)
}

// chunkGaps reads into b the tool gaps of the events up to the last
// content chunk (the stream's events): requests whose choices chunks are
// all content chunks share one pool (vLLM's and SGLang's gaps are then
// the same); the others keep both.
func (b *batch) chunkGaps(w *row, times, counts []int64, allContent bool) {
	w.plain.from, w.contentZ.from, w.choicesZ.from = len(b.plain), len(b.contentZ), len(b.choicesZ)
	if allContent {
		for i := 1; i < len(times); i++ {
			b.plain = appendPoolable(b.plain, nanos(times[i]-times[i-1]))
		}
	} else {
		prev := int64(-1)
		for i := range times {
			if i > 0 {
				b.choicesZ = appendPoolable(b.choicesZ, nanos(times[i]-times[i-1]))
			}
			if counts[i] != 0 {
				if prev >= 0 {
					b.contentZ = appendPoolable(b.contentZ, nanos(times[i]-prev))
				}
				prev = times[i]
			}
		}
	}
	w.plain.to, w.contentZ.to, w.choicesZ.to = len(b.plain), len(b.contentZ), len(b.choicesZ)
}

func nanos(ns int64) float64 { return float64(ns) / 1e9 }

// toolInfo describes one tool; the metrics are computed in definitions().
type toolInfo struct {
	id, name, source, differs, percentiles string
}

var tools = []toolInfo{
	{"vllm", "vLLM bench serve", "vllm/benchmarks/serve.py calculate_metrics; lib/endpoint_request_func.py",
		"TTFT at the first chunk with choices (the empty role chunk counts); ITL pools every chunk gap, not per token",
		"np.percentile linear; median np.median"},
	{"aiperf", "AIPerf / GenAI-Perf", "genai_perf/profile_data_parser/llm_profile_data_parser.py _parse_requests",
		"its ITL is (E2E-TTFT)/(N-1), i.e. vLLM's TPOT, rounded to whole ns; none for 1 response or 1 token",
		"np.percentile linear on integer ns"},
	{"llmperf", "LLMPerf", "llmperf openai_chat_completions_client.py; token_benchmark_ray.py",
		"ITL includes TTFT: (last content - start) / SSE data events (role chunk included); E2E at stream close",
		"pandas quantile (linear)"},
	{"guidellm", "GuideLLM", "guidellm/schemas/request_stats.py; schemas/statistics.py",
		"TPOT includes TTFT ((last-start)/N, weight N); ITL = vLLM's TPOT, weight N-1; nearest-rank percentiles",
		"weighted nearest rank (first value with CDF >= p)"},
	{"sglang", "SGLang bench_serving", "python/sglang/bench_serving.py calculate_metrics (OpenAI backends)",
		"E2E ends at [DONE] (span end), so TPOT takes in the stream tail; ITL pools gaps of content chunks only",
		"np.percentile linear; median np.median"},
	{"distserve", "DistServe", "evaluation/2-benchmark-serving/structs.py RequestResult",
		"TPOT = (last - first token)/(N-1), 0 for one token (always passes); no ITL; it reports SLO attainment",
		"none in the source (SLO attainment); np.percentile linear here"},
	{"llmslo", "llmslo (this processor)", "docs/processor.md, Formulas",
		"TTFT at the first chunk with output; E2E at the last output; ITL as the processor measured the gaps",
		"np.percentile linear (exact)"},
}

// ToolIDs lists the tool ids in report order.
func ToolIDs() []string {
	ids := make([]string, len(tools))
	for i, t := range tools {
		ids[i] = t.id
	}
	return ids
}

// perRequest accumulates one metric's per-request values (and weights, for
// GuideLLM), in blocks: one pass over the streams fills every tool's
// metrics before the tools' tasks run at once, and each task takes its
// own copies in one slice (blocks.slice).
type perRequest struct {
	vals, weights blocks[float64]
}

func (p *perRequest) add(v float64) { p.vals.add(v) }
func (p *perRequest) addW(v, w float64) {
	p.vals.add(v)
	p.weights.add(w)
}

func metric(label, formula, weighting string) schema.ToolMetric {
	return schema.ToolMetric{Label: label, Formula: formula, Weighting: weighting, Exact: true}
}

// numpyStats fills m with numpy's mean and linear percentiles; median
// selects np.median for P50 (vLLM, SGLang) instead of np.percentile(50).
func numpyStats(m schema.ToolMetric, p *perRequest, median bool, scale float64) schema.ToolMetric {
	s := p.vals.slice()
	m.Count = int64(len(s))
	if len(s) == 0 {
		m.Mean, m.P50, m.P90, m.P99 = schema.NaN(), schema.NaN(), schema.NaN(), schema.NaN()
		return m
	}
	m.Mean = schema.Num(npMean(s) * scale) // in the requests' order, as numpy sums
	slices.Sort(s)
	if median {
		m.P50 = schema.Num(npMedian(s) * scale)
	} else {
		m.P50 = schema.Num(npPercentile(s, 50) * scale)
	}
	m.P90 = schema.Num(npPercentile(s, 90) * scale)
	m.P99 = schema.Num(npPercentile(s, 99) * scale)
	return m
}

func distStats(m schema.ToolMetric, d schema.Dist) schema.ToolMetric {
	m.Count, m.Mean, m.P50, m.P90, m.P99, m.Exact = d.Count, d.Mean, d.P50, d.P90, d.P99, d.Exact
	return m
}

// guideStats is GuideLLM's DistributionSummary.from_values: weighted mean
// and nearest-rank percentiles; Count is the number of requests with a
// positive weight (GuideLLM's count is the sum of the weights).
func guideStats(m schema.ToolMetric, p *perRequest) schema.ToolMetric {
	w := p.weights.slice()
	for _, x := range w {
		if x > 0 {
			m.Count++
		}
	}
	nr := newNearestRank(p.vals.slice(), w)
	m.Mean = schema.Num(nr.mean)
	m.P50, m.P90, m.P99 = schema.Num(nr.percentile(0.5)), schema.Num(nr.percentile(0.9)), schema.Num(nr.percentile(0.99))
	return m
}

// toolValues are the per-request values of every tool's metrics: v (vLLM),
// a (AIPerf, ns), l (LLMPerf), g (GuideLLM, weighted), s (SGLang), d
// (DistServe), o (llmslo).
type toolValues struct {
	vTTFT, vTPOT, vE2E       perRequest
	aTTFT, aITL, aE2E        perRequest
	lTTFT, lITL, lE2E        perRequest
	gTTFT, gTPOT, gITL, gE2E perRequest
	sTTFT, sTPOT, sE2E       perRequest
	dTTFT, dTPOT, dE2E       perRequest
	oTTFT, oTPOT, oE2E       perRequest
}

// add applies every tool's formulas to one request's stream.
func (t *toolValues) add(s streamRec, r *record) {
	n := s.n
	// vLLM: first and last chunk with choices; N from usage.
	ttft, lat := nanos(s.firstChoice), nanos(s.last)
	t.vTTFT.add(ttft)
	t.vE2E.add(lat)
	if n > 1 {
		t.vTPOT.add((lat - ttft) / float64(n-1))
	}
	// GenAI-Perf: integer ns, empty responses deleted first.
	t.aTTFT.add(float64(s.first))
	t.aE2E.add(float64(s.last))
	if s.contents > 1 && n > 1 {
		t.aITL.add(math.RoundToEven(float64(s.last-s.first) / float64(n-1)))
	}
	// LLMPerf: sum(time_to_next_token) telescopes to the last content
	// chunk; divided by every data event (main collection path).
	t.lTTFT.add(nanos(s.first))
	t.lITL.add(nanos(s.last) / float64(s.events))
	t.lE2E.add(nanos(s.end))
	t.addGuideLLM(s)
	// SGLang (OpenAI backends): latency at the last line ([DONE]).
	t.sTTFT.add(nanos(s.first))
	t.sE2E.add(nanos(s.end))
	if n > 1 {
		t.sTPOT.add((nanos(s.end) - nanos(s.first)) / float64(n-1))
	}
	// DistServe.
	t.dTTFT.add(nanos(s.first))
	t.dE2E.add(nanos(s.end))
	if n == 1 {
		t.dTPOT.add(0)
	} else if n > 1 {
		t.dTPOT.add(nanos(s.last-s.first) / float64(n-1))
	}
	// llmslo: the processor's own values for the same request.
	for _, x := range []struct {
		p *perRequest
		v float64
	}{{&t.oTTFT, r.ttft}, {&t.oTPOT, r.tpot}, {&t.oE2E, r.e2e}} {
		if !math.IsNaN(x.v) {
			x.p.add(x.v)
		}
	}
}

// addGuideLLM: GuideLLM >= 0.4, output_tokens from usage, else content
// chunks; None becomes 0.0 with weight 0.
func (t *toolValues) addGuideLLM(s streamRec) {
	gn := s.n
	if !s.usage {
		gn = int64(s.contents)
	}
	t.gTTFT.addW(nanos(s.first), 1)
	t.gE2E.addW(nanos(s.end), 1)
	if gn > 0 {
		t.gTPOT.addW(nanos(s.last)/float64(gn), float64(gn))
	} else {
		t.gTPOT.addW(0, 0)
	}
	if gn > 1 {
		t.gITL.addW(nanos(s.last-s.first)/float64(gn-1), float64(gn-1))
	} else {
		t.gITL.addW(0, 0)
	}
}

// definitionParts are the definitions, one task per tool, which build
// runs at once.
type definitionParts struct {
	tasks    []func()
	requests int64
	tools    []schema.ToolDefs
}

// definitionSections sets up every tool's metrics over the same streams.
func (e *Engine) definitionSections() *definitionParts {
	t := &toolValues{}
	for _, s := range e.streams.all() {
		t.add(*s, e.recs.at(int(s.rec)))
	}
	dp := &definitionParts{requests: int64(e.streams.count()), tools: make([]schema.ToolDefs, len(tools))}
	for k, info := range tools {
		dp.tasks = append(dp.tasks, func() { dp.tools[k] = e.toolDefs(info, t) })
	}
	return dp
}

func (dp *definitionParts) result() schema.Definitions {
	return schema.Definitions{Requests: dp.requests, Tools: dp.tools}
}

// toolDefs summarizes one tool's metrics with its own statistics.
func (e *Engine) toolDefs(t toolInfo, v *toolValues) schema.ToolDefs {
	const req = "request"
	td := schema.ToolDefs{Tool: t.id, Name: t.name, Source: t.source, Differs: t.differs, Percentiles: t.percentiles, Metrics: map[string]schema.ToolMetric{}}
	m := td.Metrics
	switch t.id {
	case "vllm":
		m["ttft"] = numpyStats(metric("ttft", "first choices chunk - start", req), &v.vTTFT, true, 1)
		m["tpot"] = numpyStats(metric("tpot", "(e2el - ttft)/(N-1), N > 1", req), &v.vTPOT, true, 1)
		m["itl"] = distStats(metric("itl", "every gap between choices chunks", "gap"), summarize(e.plain, e.choicesZ))
		m["e2e"] = numpyStats(metric("e2el", "last choices chunk - start", req), &v.vE2E, true, 1)
	case "aiperf":
		m["ttft"] = numpyStats(metric("time_to_first_token", "first non-empty response - start", req), &v.aTTFT, false, 1e-9)
		m["itl"] = numpyStats(metric("inter_token_latency", "round((latency - ttft)/(N-1)) ns; responses > 1, N > 1", req), &v.aITL, false, 1e-9)
		m["e2e"] = numpyStats(metric("request_latency", "last non-empty response - start", req), &v.aE2E, false, 1e-9)
	case "llmperf":
		m["ttft"] = numpyStats(metric("ttft_s", "first content chunk - start", req), &v.lTTFT, false, 1)
		m["itl"] = numpyStats(metric("inter_token_latency_s", "(last content - start) / data events", req), &v.lITL, false, 1)
		m["e2e"] = numpyStats(metric("end_to_end_latency_s", "stream closed - start", req), &v.lE2E, false, 1)
	case "guidellm":
		m["ttft"] = guideStats(metric("time_to_first_token_ms", "first content chunk - start", req), &v.gTTFT)
		m["tpot"] = guideStats(metric("time_per_output_token_ms", "(last content - start)/N", "N"), &v.gTPOT)
		m["itl"] = guideStats(metric("inter_token_latency_ms", "(last - first content)/(N-1)", "N-1"), &v.gITL)
		m["e2e"] = guideStats(metric("request_latency", "after [DONE] - start", req), &v.gE2E)
	case "sglang":
		m["ttft"] = numpyStats(metric("ttft", "first content chunk - start", req), &v.sTTFT, true, 1)
		m["tpot"] = numpyStats(metric("tpot", "(e2e - ttft)/(N-1), N > 1", req), &v.sTPOT, true, 1)
		m["itl"] = distStats(metric("itl", "every gap between content chunks", "gap"), summarize(e.plain, e.contentZ))
		m["e2e"] = numpyStats(metric("e2e_latency", "last line ([DONE]) - start", req), &v.sE2E, true, 1)
	case "distserve":
		m["ttft"] = numpyStats(metric("ftl", "first token - start", req), &v.dTTFT, false, 1)
		m["tpot"] = numpyStats(metric("tpot", "(last - first token)/(N-1); 0 if N = 1", req), &v.dTPOT, false, 1)
		m["e2e"] = numpyStats(metric("latency", "end - start", req), &v.dE2E, false, 1)
	case "llmslo":
		m["ttft"] = numpyStats(metric("llm.ttft", "first output - start", req), &v.oTTFT, false, 1)
		m["tpot"] = numpyStats(metric("llm.tpot", "(e2e - ttft)/(N-1), N >= 2", req), &v.oTPOT, false, 1)
		m["itl"] = distStats(metric("llm.itl.gaps", e.itlFormula(), "gap"), summarize(e.gapsDefs...))
		m["e2e"] = numpyStats(metric("llm.e2e", "last output - start", req), &v.oE2E, false, 1)
	}
	return td
}

func (e *Engine) itlFormula() string {
	if e.tokenAware {
		return "every gap between output chunks, divided over the chunk's tokens"
	}
	return "every gap between output chunks"
}
