// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmslo/llmslo/internal/aggregate"
	"github.com/llmslo/llmslo/internal/contract"
)

// heavyTailed draws from a lognormal body (median, sigma) with a Pareto
// tail (share tail, scale xm, index alpha), truncated to [lo, hi] by
// rejection (no point masses at the edges).
func heavyTailed(rng *rand.Rand, median, sigma, tail, xm, alpha, lo, hi float64) float64 {
	for {
		v := median * math.Exp(sigma*rng.NormFloat64())
		if rng.Float64() < tail {
			v = xm * math.Pow(1-rng.Float64(), -1/alpha)
		}
		if v >= lo && v <= hi {
			return v
		}
	}
}

// request is one generated LLM request; the exact values the connector
// must see, computed the way it reads them.
type request struct {
	ttft, tpot, e2e float64
	gapsNs          []int64 // between consecutive chunk events
	tokens          int
	unknown, met    bool
	// cause, when set, is the llm.slo.interactive.causes entry of a
	// violated request ("ttft:queue"), as the processor writes it.
	cause string
}

func genRequests(n int) []request {
	rng := rand.New(rand.NewPCG(2026, 1))
	reqs := make([]request, n)
	for i := range reqs {
		r := &reqs[i]
		// Four decades each: TTFT and ITL gaps in [1 ms, 10 s], TPOT in
		// [1 ms, 10 s], E2E in [10 ms, 100 s].
		for {
			r.ttft = heavyTailed(rng, 0.2, 0.8, 0.1, 0.5, 1.3, 1e-3, 10)
			r.tpot = heavyTailed(rng, 0.012, 0.5, 0.03, 0.03, 1.5, 1e-3, 10)
			r.tokens = 2 + int(min(2000, 100*math.Exp(rng.NormFloat64())))
			r.e2e = r.ttft + float64(r.tokens-1)*r.tpot
			if r.e2e >= 1e-2 && r.e2e <= 100 {
				break
			}
		}
		r.gapsNs = make([]int64, 3)
		for k := range r.gapsNs {
			r.gapsNs[k] = int64(math.Round(1e9 * heavyTailed(rng, 0.015, 0.7, 0.02, 0.05, 1.2, 1e-3, 10)))
		}
		r.unknown = i%50 == 7 // no TTFT: the verdict is unknown
		r.met = !r.unknown && r.ttft <= 0.5 && r.tpot <= 0.03
	}
	return reqs
}

// appendRequest writes r as the processor leaves a streamed client span:
// four chunk events, llm.itl.max and llm.itl.gaps, the verdict of SLO
// "interactive".
func appendRequest(spans ptrace.SpanSlice, r *request) {
	const start = 1_767_225_600_000_000_000
	s := spans.AppendEmpty()
	s.SetName("chat llama")
	s.SetStartTimestamp(start)
	a := s.Attributes()
	a.EnsureCapacity(12)
	a.PutStr("gen_ai.operation.name", "chat")
	a.PutStr("gen_ai.provider.name", "vllm")
	a.PutStr("llm.model", "llama")
	a.PutStr("llm.layer", "client")
	a.PutStr("llm.metrics.source", "openllmetry:events")
	if !r.unknown {
		a.PutDouble("llm.ttft", r.ttft)
	}
	a.PutDouble("llm.tpot", r.tpot)
	a.PutDouble("llm.e2e", r.e2e)
	a.PutInt("llm.output_tokens", int64(r.tokens))
	a.PutDouble("llm.itl.max", float64(slices.Max(r.gapsNs))/1e9)
	gaps := make([]float64, len(r.gapsNs))
	for i, g := range r.gapsNs {
		gaps[i] = float64(g) / 1e9
	}
	a.PutEmptyBytes("llm.itl.gaps").FromRaw(contract.AppendGaps(nil, gaps))
	switch {
	case r.unknown:
		a.PutEmptySlice("llm.slo.interactive.violations").AppendEmpty().SetStr("ttft:unknown")
	case r.met:
		a.PutBool("llm.slo.interactive.met", true)
	default:
		a.PutBool("llm.slo.interactive.met", false)
		a.PutEmptySlice("llm.slo.interactive.violations").AppendEmpty().SetStr("ttft")
		if r.cause != "" {
			a.PutEmptySlice("llm.slo.interactive.causes").AppendEmpty().SetStr(r.cause)
		}
	}
	ev := s.Events()
	ev.EnsureCapacity(len(r.gapsNs) + 1)
	t := int64(start) + 100_000_000
	for k := 0; k <= len(r.gapsNs); k++ {
		e := ev.AppendEmpty()
		e.SetName("gen_ai.content.completion.chunk")
		e.SetTimestamp(pcommon.Timestamp(t))
		if k < len(r.gapsNs) {
			t += r.gapsNs[k]
		}
	}
	s.SetEndTimestamp(pcommon.Timestamp(t + 1_000_000))
}

// TestAccuracy sends 100,000 requests from heavy-tailed distributions
// through ConsumeTraces and checks, against the exact numpy-"linear"
// percentile of the same values:
//   - the request counts and the goodput ratio: exact;
//   - the window gauges (P50/P90/P99 of TTFT, TPOT, ITL gaps, E2E): within
//     the sketch's 0.39%;
//   - the exponential histograms read as Prometheus reads native
//     histograms: within one bucket width at every max_size (160: scale 3,
//     9.1%), and within 1% at max_size 2048 (scale 7, 0.54%), the setting
//     the README documents for 1% over four decades; max_size 1024 (scale
//     6, 1.09%) is logged.
func TestAccuracy(t *testing.T) {
	n := 100_000
	if testing.Short() {
		n = 20_000
	}
	reqs := genRequests(n)
	sizes := []int32{160, 1024, 2048}
	conns := make([]*llmSLOConnector, len(sizes))
	for i, size := range sizes {
		cfg := createDefaultConfig().(*Config)
		cfg.CollectorInstanceID = false
		cfg.Histogram.Exponential = &ExponentialConfig{MaxSize: size}
		conns[i] = newTestConnector(t, cfg, consumertest.NewNop())
	}
	for from := 0; from < n; from += 1000 {
		td := batch(min(1000, n-from), func(s ptrace.SpanSlice, i int) { appendRequest(s, &reqs[from+i]) })
		for _, c := range conns {
			require.NoError(t, c.ConsumeTraces(context.Background(), td))
		}
	}

	exact := map[string][]float64{}
	met, known := 0, 0
	for i := range reqs {
		r := &reqs[i]
		if !r.unknown {
			exact["ttft"] = append(exact["ttft"], r.ttft)
			known++
		}
		if r.met {
			met++
		}
		exact["tpot"] = append(exact["tpot"], r.tpot)
		exact["e2e"] = append(exact["e2e"], r.e2e)
		for _, g := range r.gapsNs {
			exact["itl"] = append(exact["itl"], float64(g)/1e9)
		}
	}
	for _, v := range exact {
		slices.Sort(v)
	}
	windows := map[string]string{"ttft": "llm.ttft.window", "tpot": "llm.tpot.window", "itl": "llm.itl.window", "e2e": "llm.e2e.window"}
	hists := map[string]string{
		"ttft": histNames[histTTFT][layerClient], "tpot": histNames[histTPOT][layerClient],
		"itl": histNames[histITL][layerClient], "e2e": histNames[histE2E][layerClient],
	}
	kinds := []string{"ttft", "tpot", "itl", "e2e"}

	for i, c := range conns {
		size := sizes[i]
		md := c.collect(fixedNow)
		t.Run(fmt.Sprintf("max_size=%d", size), func(t *testing.T) {
			// Counts and goodput: exact.
			slo := map[string]string{attrSLOName: "interactive"}
			assert.Equal(t, int64(n), sumOver(md, metricSLORequests.name, slo))
			assert.Equal(t, int64(met), sumOver(md, metricSLOMet.name, slo))
			assert.Equal(t, int64(n-known), sumOver(md, metricSLOUnknown.name, slo))
			assert.Equal(t, int64(known-met), sumOver(md, metricSLOViolated.name, slo))
			goodput := point(t, md, metricSLOGoodput.name, slo).(pmetric.NumberDataPoint).DoubleValue()
			assert.Equal(t, float64(met)/float64(n), goodput, "goodput ratio, unknown never good")

			for _, kind := range kinds {
				xs := exact[kind]
				// Window gauges (same sketch at every max_size: checked once).
				if i == 0 {
					forPoints(md, windows[kind], func(_ pmetric.Metric, attrs pcommon.Map, dp any) {
						q, _ := attrs.Get(attrQuantile)
						p, err := strconv.ParseFloat(q.Str(), 64)
						require.NoError(t, err)
						want := aggregate.Percentile(xs, 100*p)
						got := dp.(pmetric.NumberDataPoint).DoubleValue()
						rel := math.Abs(got-want) / want
						t.Logf("window %-4s p%-4v exact %.6f sketch %.6f rel.err %.3f%%", kind, 100*p, want, got, 100*rel)
						assert.Less(t, rel, 0.01)
						assert.LessOrEqual(t, rel, aggregate.NewSketchConfig(sketchAlpha).Alpha()+1e-12, "the sketch's own bound")
					})
				}
				// Exponential histograms, read as Prometheus does.
				dp := point(t, md, hists[kind], nil).(pmetric.ExponentialHistogramDataPoint)
				require.Equal(t, uint64(len(xs)), dp.Count(), kind)
				width := aggregate.BucketWidth(dp.Scale())
				for _, p := range []float64{50, 90, 99} {
					want := aggregate.Percentile(xs, p)
					got := aggregate.ExponentialQuantile(dp, p/100)
					rel := math.Abs(got-want) / want
					lin := aggregate.ExponentialQuantileLinear(dp, p/100)
					relLin := math.Abs(lin-want) / want
					t.Logf("histogram %-4s scale %d (bucket %.2f%%) p%v exact %.6f estimate %.6f rel.err %.3f%% (linear %.3f%%)",
						kind, dp.Scale(), 100*width, p, want, got, 100*rel, 100*relLin)
					assert.Less(t, rel, width, "%s p%v within one bucket", kind, p)
					assert.Less(t, relLin, width, "%s p%v within one bucket (linear)", kind, p)
					if size >= 2048 {
						assert.GreaterOrEqual(t, dp.Scale(), int32(7), "four decades fit at scale 7")
						assert.Less(t, rel, 0.01, "%s p%v within 1%%", kind, p)
					}
				}
				assert.LessOrEqual(t, dp.Scale(), int32(8))
			}
		})
	}
}

// TestCardinality: 100,000 distinct model names. The series stay at the
// limit (the overflow series included), every request is still counted,
// and the heap does not grow between 20,000 and 100,000 names.
func TestCardinality(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	c := newTestConnector(t, cfg, consumertest.NewNop())
	limit := cfg.AggregationCardinalityLimit
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	send := func(from, to int) {
		for start := from; start < to; start += 1000 {
			td := batch(1000, func(s ptrace.SpanSlice, i int) {
				llmSpan(s, fmt.Sprintf("model-%d", start+i), 0.1, 0.01, 1, true)
			})
			require.NoError(t, c.ConsumeTraces(context.Background(), td))
		}
	}
	send(0, 20_000)
	base := heap()
	send(20_000, 100_000)
	grown := heap()
	assert.Equal(t, int64(limit-1), c.series.Live(layerClient), "the limit minus the overflow series")

	md := c.collect(fixedNow)
	assert.Equal(t, int64(100_000), sumOver(md, metricSLORequests.name, nil), "every request counted")
	assert.Equal(t, int64(100_000-(limit-1)), sumOver(md, metricSLORequests.name, map[string]string{attrOverflow: "true"}))
	series := map[string]bool{}
	forPoints(md, metricSLORequests.name, func(_ pmetric.Metric, attrs pcommon.Map, _ any) {
		series[fmt.Sprint(attrs.AsRaw())] = true
	})
	assert.Len(t, series, limit, "series of llm.slo.requests, overflow included")
	ov := point(t, md, histNames[histTTFT][layerClient], map[string]string{attrOverflow: "true"}).(pmetric.ExponentialHistogramDataPoint)
	assert.Equal(t, []string{attrCollectorInstance, "llm.layer", attrOverflow}, slices.Sorted(slices.Values(keys(ov.Attributes()))))
	t.Logf("heap after 20k names: %d KiB, after 100k: %d KiB", base>>10, grown>>10)
	assert.Less(t, float64(grown), float64(base)*1.1+1<<20, "memory flat past the limit")
}
