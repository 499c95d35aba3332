// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmslo/llmslo/internal/contract"
)

func heapAfterGC() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// fullSpan is a span with every metric the connector records: the eight
// histograms (16 ITL gaps), the four windows, two SLOs (one violated), on
// the given layer and model, with values drawn as TestAccuracy's are (four
// decades, heavy tails).
func fullSpan(spans ptrace.SpanSlice, rng *rand.Rand, layer, model string) {
	sp := spans.AppendEmpty()
	e2e := heavyTailed(rng, 1, 0.8, 0.1, 2, 1.3, 1e-2, 100)
	sp.SetStartTimestamp(1)
	sp.SetEndTimestamp(pcommon.Timestamp(1 + int64(1e9*e2e)))
	a := sp.Attributes()
	a.EnsureCapacity(16)
	a.PutStr("gen_ai.operation.name", "chat")
	a.PutStr("gen_ai.provider.name", "vllm")
	a.PutStr("llm.model", model)
	a.PutStr("llm.layer", layer)
	a.PutStr("llm.metrics.source", "vllm:attributes")
	a.PutDouble("llm.ttft", heavyTailed(rng, 0.2, 0.8, 0.1, 0.5, 1.3, 1e-3, 10))
	a.PutDouble("llm.tpot", heavyTailed(rng, 0.012, 0.5, 0.03, 0.03, 1.5, 1e-3, 10))
	a.PutDouble("llm.e2e", e2e)
	a.PutDouble("llm.queue_time", heavyTailed(rng, 0.01, 1, 0.1, 0.05, 1.3, 1e-4, 10))
	a.PutInt("llm.output_tokens", int64(2+rng.IntN(2000)))
	a.PutInt("llm.input_tokens", int64(1+rng.IntN(20000)))
	gaps := make([]float64, 16)
	for i := range gaps {
		gaps[i] = heavyTailed(rng, 0.015, 0.7, 0.02, 0.05, 1.2, 1e-3, 10)
	}
	a.PutEmptyBytes("llm.itl.gaps").FromRaw(contract.AppendGaps(nil, gaps))
	a.PutBool("llm.slo.interactive.met", false)
	a.PutEmptySlice("llm.slo.interactive.violations").AppendEmpty().SetStr("ttft")
	a.PutBool("llm.slo.batch.met", true)
}

// fillAtLimit sends every series of both layers, the default limit full,
// spansPerStep spans in each of the window's six sub-windows.
func fillAtLimit(t testing.TB, c *llmSLOConnector, now *time.Time, spansPerStep int) (series int) {
	rng := rand.New(rand.NewPCG(7, 7))
	models := c.cfg.AggregationCardinalityLimit - 1
	for step := range windowSlots {
		*now = fixedNow.Add(time.Duration(step) * c.cfg.Window / windowSlots)
		for _, layer := range layerNames {
			for from := 0; from < models; from += 100 {
				n := min(100, models-from)
				td := batch(n*spansPerStep, func(s ptrace.SpanSlice, i int) {
					fullSpan(s, rng, layer, fmt.Sprintf("model-%05d", from+i/spansPerStep))
				})
				require.NoError(t, c.ConsumeTraces(context.Background(), td))
			}
		}
	}
	return 2 * models
}

// TestMemoryAtLimit: the default configuration at its cardinality limit
// (1,999 models per layer, both layers), every metric present, two SLOs,
// 20 spans per series in each of the window's sub-windows (2 requests/s
// per series, 8,000 spans/s in all), fits in 128 MiB of heap.
func TestMemoryAtLimit(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("sends 480,000 spans")
	}
	register(t, "llm.", "interactive", "batch")
	now := fixedNow
	c := newTestConnector(t, createDefaultConfig().(*Config), consumertest.NewNop(), withClock(func() time.Time { return now }))
	require.NoError(t, c.Start(context.Background(), componenttest.NewNopHost()))
	base := heapAfterGC()
	n := fillAtLimit(t, c, &now, 20)
	grown := heapAfterGC() - base
	require.Equal(t, int64(n/2), c.series.Live(layerServer), "the server layer full")
	require.Equal(t, int64(n/2), c.series.Live(layerClient), "the client layer full")
	_, _, one := c.series.Footprint()
	require.NotNil(t, one)
	hists, windows, slos := one.Filled()
	assert.Equal(t, int(numHistKinds), hists, "every histogram")
	assert.Equal(t, int(numWindowKinds), windows, "every window")
	assert.Equal(t, 2, slos)
	sketches, hists := footprint(c)
	t.Logf("%d series: heap %.1f MiB, %d bytes per series (window sketches %d, histograms %d)",
		n, float64(grown)/(1<<20), grown/uint64(n), sketches/n, hists/n)
	assert.LessOrEqual(t, grown, uint64(128<<20))
	runtime.KeepAlive(c)
	require.NoError(t, c.Shutdown(context.Background()))
}

// footprint adds up the bytes the series' window sketches and histograms
// hold.
func footprint(c *llmSLOConnector) (sketches, hists int) {
	sketches, hists, _ = c.series.Footprint()
	return sketches, hists
}

// TestHostileSeriesBounded: a series whose every sub-window holds values
// from 1 ns to a week (the processor's limits), its ITL window with weights
// that force four-byte counters, spans the whole range and stays under half
// a megabyte. The ceiling, four-byte counters in every window (more than
// 65,535 values in one bucket of one sub-window), is 24 sketches of at most
// 4,918 buckets (49 octaves of 89, with 1/8 headroom): 472 KB.
func TestHostileSeriesBounded(t *testing.T) {
	now := fixedNow
	c := newTestConnector(t, caseConfig(t, "exponential"), consumertest.NewNop(), withClock(func() time.Time { return now }))
	for step := range windowSlots {
		now = fixedNow.Add(time.Duration(step) * c.cfg.Window / windowSlots)
		td := batch(2, func(s ptrace.SpanSlice, i int) {
			v := []float64{1e-9, 7 * 24 * 3600}[i]
			sp := llmSpan(s, "m", v, v, v, true)
			sp.Attributes().PutEmptyBytes("llm.itl.gaps").FromRaw(contract.AppendGaps(nil, []float64{v}))
			sp.Attributes().PutEmptyBytes("llm.itl.gap_weights").FromRaw(contract.AppendGapWeights(nil, []int64{1 << 24}))
		})
		for range 2 {
			require.NoError(t, c.ConsumeTraces(context.Background(), td))
		}
	}
	sketches, hists := footprint(c)
	t.Logf("one hostile series: window sketches %d bytes, histograms %d", sketches, hists)
	assert.Less(t, sketches+hists, 512<<10)
	assert.Greater(t, sketches, 24*4372, "every sketch spans the whole range")
}
