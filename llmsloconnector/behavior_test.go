// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/pmetrictest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmslo/llmslo/internal/contract"
	"github.com/llmslo/llmslo/internal/metadata"
)

// llmSpan appends a processed client span with the given values.
func llmSpan(spans ptrace.SpanSlice, model string, ttft, tpot, e2e float64, met bool) ptrace.Span {
	s := spans.AppendEmpty()
	s.SetName("chat " + model)
	s.SetStartTimestamp(1_767_225_600_000_000_000)
	s.SetEndTimestamp(pcommon.Timestamp(1_767_225_600_000_000_000 + int64(e2e*1e9)))
	a := s.Attributes()
	a.PutStr("gen_ai.operation.name", "chat")
	a.PutStr("llm.model", model)
	a.PutStr("llm.layer", "client")
	a.PutStr("llm.metrics.source", "semconv:attributes")
	a.PutDouble("llm.ttft", ttft)
	a.PutDouble("llm.tpot", tpot)
	a.PutDouble("llm.e2e", e2e)
	a.PutInt("llm.output_tokens", 100)
	a.PutBool("llm.slo.interactive.met", met)
	if !met {
		a.PutEmptySlice("llm.slo.interactive.violations").AppendEmpty().SetStr("ttft")
	}
	return s
}

// batch returns traces of n spans made by fill.
func batch(n int, fill func(spans ptrace.SpanSlice, i int)) ptrace.Traces {
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	spans.EnsureCapacity(n)
	for i := range n {
		fill(spans, i)
	}
	return td
}

func TestLifecycle(t *testing.T) {
	f := NewFactory()
	assert.Equal(t, metadata.Type, f.Type())
	assert.Equal(t, metadata.TracesToMetricsStability, f.TracesToMetricsStability())
	cfg := caseConfig(t, "exponential")
	sink := new(consumertest.MetricsSink)
	set := connectortest.NewNopSettings(metadata.Type)

	conn, err := f.CreateTracesToMetrics(context.Background(), set, cfg, sink)
	require.NoError(t, err)
	assert.Equal(t, consumer.Capabilities{MutatesData: false}, conn.Capabilities())
	require.NoError(t, conn.Shutdown(context.Background()), "shutdown without start")

	conn, err = f.CreateTracesToMetrics(context.Background(), set, cfg, sink)
	require.NoError(t, err)
	require.NoError(t, conn.Start(context.Background(), componenttest.NewNopHost()))
	in := readInput(t)
	in.MarkReadOnly() // MutatesData false: the connector must not write to it
	require.NoError(t, conn.ConsumeTraces(context.Background(), in))
	require.NoError(t, conn.Shutdown(context.Background()))
	require.Len(t, sink.AllMetrics(), 1, "pending data is flushed on shutdown")
	assert.Equal(t, int64(6), sumOver(sink.AllMetrics()[0], metricSLORequests.name, map[string]string{attrSLOName: "interactive"}))
	require.NoError(t, conn.Shutdown(context.Background()), "second shutdown")
}

// TestShutdownHonoursContext: a canceled context ends Shutdown without
// waiting for a flush that is stuck downstream.
func TestShutdownHonoursContext(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	ticks := make(chan time.Time)
	next, err := consumer.NewMetrics(func(context.Context, pmetric.Metrics) error {
		<-block
		return nil
	})
	require.NoError(t, err)
	c := newTestConnector(t, caseConfig(t, "delta"), next, withTicker(ticks))
	require.NoError(t, c.Start(context.Background(), componenttest.NewNopHost()))
	require.NoError(t, c.ConsumeTraces(context.Background(), readInput(t)))
	ticks <- fixedNow // the flush loop is now stuck downstream
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, c.Shutdown(ctx), context.DeadlineExceeded)
}

// TestFlushOnTicker: each tick emits the metrics; nothing is emitted
// between ticks; an error downstream does not stop the loop.
func TestFlushOnTicker(t *testing.T) {
	ticks := make(chan time.Time)
	var mu sync.Mutex
	var got []pmetric.Metrics
	calls := 0
	next, err := consumer.NewMetrics(func(_ context.Context, md pmetric.Metrics) error {
		mu.Lock()
		defer mu.Unlock()
		calls++
		got = append(got, md)
		if calls == 1 {
			return errors.New("exporter down")
		}
		return nil
	})
	require.NoError(t, err)
	c := newTestConnector(t, caseConfig(t, "exponential"), next, withTicker(ticks))
	require.NoError(t, c.Start(context.Background(), componenttest.NewNopHost()))
	require.NoError(t, c.ConsumeTraces(context.Background(), readInput(t)))
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(got) }
	assert.Equal(t, 0, count())
	ticks <- fixedNow
	require.Eventually(t, func() bool { return count() == 1 }, 5*time.Second, time.Millisecond)
	ticks <- fixedNow
	require.Eventually(t, func() bool { return count() == 2 }, 5*time.Second, time.Millisecond)
	require.NoError(t, c.Shutdown(context.Background()))
	assert.Equal(t, 3, count(), "one more on shutdown")
	mu.Lock()
	defer mu.Unlock()
	// Cumulative: every flush carries the same totals.
	for _, md := range got {
		assert.Equal(t, int64(6), sumOver(md, metricSLORequests.name, map[string]string{attrSLOName: "interactive"}))
	}
}

// TestRealTicker: with the default ticker, metrics_flush_interval drives
// the flushes (a 30-second demo sees several at the default 5 s).
func TestRealTicker(t *testing.T) {
	cfg := caseConfig(t, "exponential")
	cfg.MetricsFlushInterval = 10 * time.Millisecond
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, cfg, sink)
	require.NoError(t, c.Start(context.Background(), componenttest.NewNopHost()))
	require.NoError(t, c.ConsumeTraces(context.Background(), readInput(t)))
	require.Eventually(t, func() bool { return len(sink.AllMetrics()) >= 2 }, 5*time.Second, 5*time.Millisecond)
	require.NoError(t, c.Shutdown(context.Background()))
}

// TestTemporality: cumulative points keep the series' start time and
// accumulate; delta points start at the previous flush and hold only what
// arrived since.
func TestTemporality(t *testing.T) {
	for _, tc := range []struct {
		name        string
		delta       bool
		wantSecond  int64
		wantTTFTCnt uint64
	}{
		{"cumulative", false, 12, 4},
		{"delta", true, 6, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := caseConfig(t, "exponential")
			if tc.delta {
				cfg.AggregationTemporality = temporalityDelta
			}
			now := fixedNow
			c := newTestConnector(t, cfg, consumertest.NewNop(), withClock(func() time.Time { return now }))
			t0 := pcommon.NewTimestampFromTime(fixedNow)
			require.NoError(t, c.ConsumeTraces(context.Background(), readInput(t)))
			now = fixedNow.Add(5 * time.Second)
			first := c.collect(now)
			t1 := pcommon.NewTimestampFromTime(now)
			now = fixedNow.Add(7 * time.Second)
			require.NoError(t, c.ConsumeTraces(context.Background(), readInput(t)))
			now = fixedNow.Add(10 * time.Second)
			second := c.collect(now)
			t2 := pcommon.NewTimestampFromTime(now)

			slo := map[string]string{attrSLOName: "interactive", "llm.layer": "server"}
			p1 := point(t, first, metricSLORequests.name, slo).(pmetric.NumberDataPoint)
			p2 := point(t, second, metricSLORequests.name, slo).(pmetric.NumberDataPoint)
			assert.Equal(t, t0, p1.StartTimestamp())
			assert.Equal(t, t1, p1.Timestamp())
			assert.Equal(t, t2, p2.Timestamp())
			assert.Equal(t, int64(2), p1.IntValue())
			assert.Equal(t, tc.wantSecond/3, p2.IntValue())
			assert.Equal(t, tc.wantSecond, sumOver(second, metricSLORequests.name, map[string]string{attrSLOName: "interactive"}))
			h := point(t, second, histNames[histTTFT][layerServer], nil).(pmetric.ExponentialHistogramDataPoint)
			assert.Equal(t, tc.wantTTFTCnt, h.Count())
			wantTemporality := pmetric.AggregationTemporalityCumulative
			if tc.delta {
				// Delta: the second interval starts where the first ended.
				assert.Equal(t, t1, p2.StartTimestamp())
				assert.Equal(t, t1, h.StartTimestamp())
				wantTemporality = pmetric.AggregationTemporalityDelta
			} else {
				assert.Equal(t, t0, p2.StartTimestamp(), "stable start per series")
				assert.Equal(t, t0, h.StartTimestamp())
			}
			forPoints(second, metricSLORequests.name, func(m pmetric.Metric, _ pcommon.Map, _ any) {
				assert.Equal(t, wantTemporality, m.Sum().AggregationTemporality())
				assert.True(t, m.Sum().IsMonotonic())
			})
			forPoints(second, histNames[histTTFT][layerServer], func(m pmetric.Metric, _ pcommon.Map, _ any) {
				assert.Equal(t, wantTemporality, m.ExponentialHistogram().AggregationTemporality())
			})
		})
	}
}

// TestDeltaNewSeriesStartsAtPreviousFlush: a series first seen between two
// flushes gets the previous flush as its start, and an idle delta series
// emits no zero points.
func TestDeltaNewSeriesStartsAtPreviousFlush(t *testing.T) {
	cfg := caseConfig(t, "delta")
	now := fixedNow
	c := newTestConnector(t, cfg, consumertest.NewNop(), withClock(func() time.Time { return now }))
	now = fixedNow.Add(5 * time.Second)
	flushed := pcommon.NewTimestampFromTime(now)
	assert.Zero(t, c.collect(now).DataPointCount())
	now = fixedNow.Add(7 * time.Second)
	require.NoError(t, c.ConsumeTraces(context.Background(), batch(1, func(s ptrace.SpanSlice, _ int) { llmSpan(s, "m", 0.1, 0.01, 1, true) })))
	now = fixedNow.Add(10 * time.Second)
	md := c.collect(now)
	p := point(t, md, metricSLORequests.name, nil).(pmetric.NumberDataPoint)
	assert.Equal(t, flushed, p.StartTimestamp())
	now = fixedNow.Add(15 * time.Second)
	md = c.collect(now)
	assert.Zero(t, sumOver(md, metricSLORequests.name, nil), "no new requests: no counter point")
	forPoints(md, histNames[histTTFT][layerClient], func(pmetric.Metric, pcommon.Map, any) {
		t.Error("an empty delta histogram is not emitted")
	})
}

// TestSeriesExpiration: a series idle longer than series_expiration is
// dropped, and its slot under the cardinality limit is freed.
func TestSeriesExpiration(t *testing.T) {
	cfg := caseConfig(t, "exponential")
	cfg.AggregationCardinalityLimit = 2
	now := fixedNow
	c := newTestConnector(t, cfg, consumertest.NewNop(), withClock(func() time.Time { return now }))
	require.NoError(t, c.ConsumeTraces(context.Background(), batch(1, func(s ptrace.SpanSlice, _ int) { llmSpan(s, "old", 0.1, 0.01, 1, true) })))
	now = now.Add(4 * time.Minute)
	assert.Equal(t, int64(1), sumOver(c.collect(now), metricSLORequests.name, map[string]string{attrRequestModel: "old"}))
	now = now.Add(2 * time.Minute) // 6 min idle > 5 min
	assert.Zero(t, c.collect(now).DataPointCount())
	assert.Equal(t, int64(0), c.series.Live(layerClient))
	require.NoError(t, c.ConsumeTraces(context.Background(), batch(1, func(s ptrace.SpanSlice, _ int) { llmSpan(s, "new", 0.1, 0.01, 1, true) })))
	md := c.collect(now)
	assert.Equal(t, int64(1), sumOver(md, metricSLORequests.name, map[string]string{attrRequestModel: "new"}), "the freed slot is reused")
	assert.Zero(t, sumOver(md, metricSLORequests.name, map[string]string{attrOverflow: "true"}))
}

// TestKeepsNoInputReferences: after ConsumeTraces returns, the connector
// holds nothing of the batch: overwriting and clearing every string, map
// and event of it leaves the emitted metrics unchanged.
func TestKeepsNoInputReferences(t *testing.T) {
	c := newTestConnector(t, caseConfig(t, "exponential"), consumertest.NewNop())
	in := readInput(t)
	require.NoError(t, c.ConsumeTraces(context.Background(), in))
	before := c.collect(fixedNow)

	scribble := func(m pcommon.Map) {
		for _, v := range m.All() {
			switch v.Type() {
			case pcommon.ValueTypeStr:
				// Overwrite in place as well as replace: a retained string
				// header would still see the old bytes, a retained Value
				// would see the new ones.
				v.SetStr("scribbled")
			case pcommon.ValueTypeSlice:
				for _, e := range v.Slice().All() {
					e.SetStr("scribbled")
				}
			default:
				v.SetDouble(-1)
			}
		}
		m.Clear()
	}
	for _, rs := range in.ResourceSpans().All() {
		scribble(rs.Resource().Attributes())
		for _, ss := range rs.ScopeSpans().All() {
			for _, s := range ss.Spans().All() {
				scribble(s.Attributes())
				s.Events().RemoveIf(func(ptrace.SpanEvent) bool { return true })
				s.SetStartTimestamp(0)
			}
			ss.Spans().RemoveIf(func(ptrace.Span) bool { return true })
		}
	}
	in.ResourceSpans().RemoveIf(func(ptrace.ResourceSpans) bool { return true })
	after := c.collect(fixedNow)
	require.NoError(t, pmetrictest.CompareMetrics(before, after, compareOptions...))
	assert.Equal(t, before.DataPointCount(), after.DataPointCount())
}

// TestSkipsForeignSpans: spans without the processor's attributes, or with
// an unknown layer, are counted in the connector's telemetry and ignored;
// negative, non-finite and wrongly typed values never reach a histogram and
// are counted too.
func TestSkipsForeignSpans(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	c, err := newConnector(tel.NewTelemetrySettings(), caseConfig(t, "delta"), consumertest.NewNop(), withClock(func() time.Time { return fixedNow }))
	require.NoError(t, err)
	td := batch(4, func(spans ptrace.SpanSlice, i int) {
		switch i {
		case 0:
			spans.AppendEmpty().SetName("GET /")
		case 1:
			s := llmSpan(spans, "m", 0.1, 0.01, 1, true)
			s.Attributes().PutStr("llm.layer", "edge") // not a layer
		case 2:
			llmSpan(spans, "m", math.NaN(), -1, math.Inf(1), true)
		case 3:
			s := llmSpan(spans, "m", 0.1, 0.01, 1, true)
			s.Attributes().PutStr("llm.ttft", "fast")
			s.Attributes().PutDouble("llm.queue_time", -0.5)
		}
	})
	require.NoError(t, c.ConsumeTraces(context.Background(), td))
	md := c.collect(fixedNow)
	assert.Equal(t, int64(2), sumOver(md, metricSLORequests.name, nil), "two LLM spans")
	assert.Zero(t, sumOver(md, histNames[histTTFT][layerClient], nil))
	assert.Equal(t, int64(1), sumOver(md, histNames[histTPOT][layerClient], nil))
	assert.Equal(t, int64(1), sumOver(md, histNames[histE2E][layerClient], nil))
	assert.Zero(t, sumOver(md, histNames[histQueue][layerClient], nil))

	assert.Equal(t, int64(2), counter(t, tel, telemetryDefs.skipped))
	assert.Equal(t, int64(5), counter(t, tel, telemetryDefs.rejected), "NaN, -1, +Inf, a string, -0.5")
}

// TestInstanceID: on by default, a random UUID per connector instance on
// every point; off, absent.
func TestInstanceID(t *testing.T) {
	set := connectortest.NewNopSettings(metadata.Type).TelemetrySettings
	ids := map[string]bool{}
	for range 2 {
		c, err := newConnector(set, createDefaultConfig().(*Config), consumertest.NewNop())
		require.NoError(t, err)
		require.NoError(t, c.ConsumeTraces(context.Background(), readInput(t)))
		forPoints(c.collect(time.Now()), metricSLORequests.name, func(_ pmetric.Metric, attrs pcommon.Map, _ any) {
			v, ok := attrs.Get(attrCollectorInstance)
			require.True(t, ok)
			_, err := uuid.Parse(v.Str())
			require.NoError(t, err)
			ids[v.Str()] = true
		})
	}
	assert.Len(t, ids, 2, "one id per instance")

	c := newTestConnector(t, caseConfig(t, "delta"), consumertest.NewNop())
	require.NoError(t, c.ConsumeTraces(context.Background(), readInput(t)))
	forPoints(c.collect(fixedNow), metricSLORequests.name, func(_ pmetric.Metric, attrs pcommon.Map, _ any) {
		_, ok := attrs.Get(attrCollectorInstance)
		assert.False(t, ok)
	})
}

// TestConcurrent consumes from many goroutines while flushes run; -race
// checks the locking, the totals check that nothing is lost.
func TestConcurrent(t *testing.T) {
	cfg := caseConfig(t, "exponential")
	cfg.AggregationCardinalityLimit = 5 // some goroutines hit the overflow series
	ticks := make(chan time.Time)
	c := newTestConnector(t, cfg, consumertest.NewNop(), withTicker(ticks))
	require.NoError(t, c.Start(context.Background(), componenttest.NewNopHost()))
	const goroutines, batches, spans = 8, 40, 25
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range batches {
				td := batch(spans, func(s ptrace.SpanSlice, j int) {
					llmSpan(s, fmt.Sprintf("m%d", (g+i+j)%9), 0.1+float64(j)/100, 0.01, 1, j%2 == 0)
				})
				assert.NoError(t, c.ConsumeTraces(context.Background(), td))
			}
		})
	}
	for range 20 {
		ticks <- time.Now()
	}
	wg.Wait()
	require.NoError(t, c.Shutdown(context.Background()))
	md := c.collect(fixedNow)
	assert.Equal(t, int64(goroutines*batches*spans), sumOver(md, metricSLORequests.name, nil))
	assert.Equal(t, int64(goroutines*batches*13), sumOver(md, metricSLOMet.name, nil))
	assert.Equal(t, int64(goroutines*batches*spans), sumOver(md, histNames[histTTFT][layerClient], nil))
}

// TestSteadyStateAllocations: once its series exists, a span costs no
// allocation (the key is built in pooled scratch and looked up with
// m[string(buf)]).
func TestSteadyStateAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	for _, tc := range []string{"exponential", "input_classes"} {
		t.Run(tc, func(t *testing.T) { testSteadyStateAllocations(t, tc) })
	}
}

func testSteadyStateAllocations(t *testing.T, tc string) {
	c := newTestConnector(t, caseConfig(t, tc), consumertest.NewNop())
	in := readInput(t)
	require.NoError(t, c.ConsumeTraces(context.Background(), in))
	td := batch(1000, func(s ptrace.SpanSlice, i int) {
		sp := llmSpan(s, fmt.Sprintf("m%d", i%4), 0.1+float64(i%10)/100, 0.01, 1, i%3 != 0)
		ev := sp.Events()
		for k := range 5 {
			ev.AppendEmpty().SetTimestamp(sp.StartTimestamp() + pcommon.Timestamp(100_000_000+k*20_000_000))
			ev.At(k).SetName("gen_ai.content.completion.chunk")
		}
		if i%3 == 0 {
			sp.Attributes().PutEmptySlice("llm.slo.interactive.causes").AppendEmpty().SetStr("ttft:queue")
		}
		sp.Attributes().PutDouble("llm.itl.max", 0.02)
		sp.Attributes().PutEmptyBytes("llm.itl.gaps").FromRaw(contract.AppendGaps(nil, []float64{0.02, 0.02, 0.02, 0.02}))
	})
	require.NoError(t, c.ConsumeTraces(context.Background(), td)) // creates the series
	allocs := testing.AllocsPerRun(20, func() {
		_ = c.ConsumeTraces(context.Background(), td)
		_ = c.ConsumeTraces(context.Background(), in)
	})
	t.Logf("%.1f allocations per 1,007 spans", allocs)
	assert.LessOrEqual(t, allocs, 2.0)
}
