// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.uber.org/zap"
)

// flush emits every series and, for delta temporality, resets them. Series
// idle longer than series_expiration are dropped first. One flush runs at a
// time; it locks one shard at a time, so spans keep flowing into the others.
// The metrics go downstream after every lock is released.
func (c *llmSLOConnector) flush(ctx context.Context) {
	md := c.collect(c.now())
	if md.DataPointCount() == 0 {
		return
	}
	if err := c.next.ConsumeMetrics(ctx, md); err != nil {
		c.logger.Warn("failed to send LLM SLO metrics downstream", zap.Error(err))
	}
}

// collect builds the metrics of every series at time now, and makes now the
// start of the next delta interval.
func (c *llmSLOConnector) collect(now time.Time) pmetric.Metrics {
	c.flushMu.Lock()
	defer c.flushMu.Unlock()
	defer c.lastFlush.Store(now.UnixNano())
	b := newBuilder(c.cfg.AggregationTemporality == temporalityDelta)
	ts := pcommon.NewTimestampFromTime(now)
	live := c.liveSeries(now)
	for i := range live {
		e := &live[i]
		e.sh.mu.Lock()
		c.emit(b, e.s, ts, now)
		e.sh.mu.Unlock()
	}
	clear(live) // drop the references until the next flush
	c.live = live[:0]
	c.limits.eachOverflow(func(s *series) { c.emit(b, s, ts, now) })
	return b.md
}

// liveEntry is a series to emit, with its key and shard.
type liveEntry struct {
	key string
	s   *series
	sh  *shard
}

// liveSeries drops the expired series and returns the others sorted by key.
// Map order and the shards' random hash seed would otherwise order the
// output differently on every run, which made the golden files' -update
// rewrite them needlessly. Only a flush removes series, and one flush runs
// at a time, so every entry is still live when it is emitted.
func (c *llmSLOConnector) liveSeries(now time.Time) []liveEntry {
	live := c.live[:0]
	for i := range c.shards {
		sh := &c.shards[i]
		sh.mu.Lock()
		for key, s := range sh.series {
			if exp := c.cfg.SeriesExpiration; exp > 0 && now.Sub(s.lastSeen) > exp {
				delete(sh.series, key)
				c.limits.release(s.layer)
				continue
			}
			live = append(live, liveEntry{key, s, sh})
		}
		sh.mu.Unlock()
	}
	slices.SortFunc(live, func(a, b liveEntry) int { return strings.Compare(a.key, b.key) })
	return live
}

// emit writes one series' points, then resets it for delta temporality.
func (c *llmSLOConnector) emit(b *builder, s *series, ts pcommon.Timestamp, now time.Time) {
	c.emitHistograms(b, s, ts)
	c.emitUsage(b, s, ts)
	c.emitSLOs(b, s, ts, now)
	c.emitWindows(b, s, ts, now)
	if b.delta {
		s.start = ts
	}
}

// point stamps a number point with the series' attributes and times.
func stamp(s *series, dp pmetric.NumberDataPoint, ts pcommon.Timestamp) pmetric.NumberDataPoint {
	s.dims.CopyTo(dp.Attributes())
	dp.SetStartTimestamp(s.start)
	dp.SetTimestamp(ts)
	return dp
}

func (c *llmSLOConnector) emitHistograms(b *builder, s *series, ts pcommon.Timestamp) {
	for k := range numHistKinds {
		h := s.hists[k]
		if h == nil || b.delta && h.Count() == 0 {
			continue
		}
		m := b.metric(s, c.names.histDef(k, s.layer))
		dp := h.AppendTo(m)
		if m.Type() == pmetric.MetricTypeExponentialHistogram {
			m.ExponentialHistogram().SetAggregationTemporality(b.temporality())
		} else {
			m.Histogram().SetAggregationTemporality(b.temporality())
		}
		s.dims.CopyTo(dp.Attributes())
		if tt, ok := tokenType[k]; ok && c.names.tokenType {
			dp.Attributes().PutStr(attrTokenType, tt)
		}
		dp.SetStartTimestamp(s.start)
		dp.SetTimestamp(ts)
		if s.exemplars != nil {
			s.exemplars.hists[k].AppendTo(dp.Exemplars())
			s.exemplars.hists[k].Reset()
		}
		if b.delta {
			h.Reset()
		}
	}
}

func (c *llmSLOConnector) emitSLOs(b *builder, s *series, ts pcommon.Timestamp, now time.Time) {
	for i, sc := range s.slos {
		name, ok := c.src.names.name(i)
		if sc == nil || !ok {
			continue
		}
		for _, x := range [...]struct {
			def metricDef
			v   *uint64
		}{
			{metricSLORequests, &sc.selected},
			{metricSLOMet, &sc.met},
			{metricSLOViolated, &sc.violated},
			{metricSLOUnknown, &sc.unknown},
			{metricSLOTokensMet, &sc.tokensMet},
			{metricSLOWeighted, &sc.weighted},
			{metricSLOWeightedSpans, &sc.weightedSpans},
		} {
			dp, ok := emitCount(b, s, x.def, x.v, ts, attrSLOName, name)
			if ok && x.def == metricSLOViolated && s.exemplars != nil && i < len(s.exemplars.violated) {
				s.exemplars.violated[i].AppendTo(dp.Exemplars())
				s.exemplars.violated[i].Reset()
			}
		}
		emitViolations(b, s, sc, ts, name)
		if r, ok := sc.goodput.Value(now); ok {
			dp := stamp(s, b.gauge(s, metricSLOGoodput).AppendEmpty(), ts)
			dp.Attributes().PutStr(attrSLOName, name)
			dp.SetDoubleValue(r)
		}
	}
}

// emitCount writes one counter point with the given attributes (name,
// value pairs) and, for delta temporality, resets the count; an empty delta
// is not written (false).
func emitCount(b *builder, s *series, def metricDef, v *uint64, ts pcommon.Timestamp, attrs ...string) (pmetric.NumberDataPoint, bool) {
	if b.delta && *v == 0 {
		return pmetric.NumberDataPoint{}, false
	}
	dp := stamp(s, b.sum(s, def).AppendEmpty(), ts)
	for i := 0; i+1 < len(attrs); i += 2 {
		dp.Attributes().PutStr(attrs[i], attrs[i+1])
	}
	dp.SetIntValue(int64(*v))
	if b.delta {
		*v = 0
	}
	return dp, true
}

func (c *llmSLOConnector) emitWindows(b *builder, s *series, ts pcommon.Timestamp, now time.Time) {
	for w := range numWindowKinds {
		win := s.windows[w]
		if win == nil {
			continue
		}
		sk := win.MergeInto(c.merged, now)
		if sk.Count() == 0 {
			continue
		}
		for _, p := range c.cfg.Percentiles {
			dp := stamp(s, b.gauge(s, metricDef{windowNames[w], unitSeconds, windowDescription}).AppendEmpty(), ts)
			dp.Attributes().PutStr(attrQuantile, strconv.FormatFloat(p/100, 'f', -1, 64))
			dp.SetDoubleValue(sk.Quantile(p / 100))
		}
		c.emitPressure(b, s, ts, w, sk, win.Heaviest(now))
	}
}
