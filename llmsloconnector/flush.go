package llmsloconnector

import (
	"context"
	"strconv"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.uber.org/zap"

	"github.com/llmslo/llmslo/internal/metadata"
)

// builder assembles one flush's pmetric.Metrics: one ResourceMetrics per
// distinct set of resource dimensions, one Metric per name within it.
type builder struct {
	md        pmetric.Metrics
	resources map[string]*resourceBuilder
	delta     bool
}

type resourceBuilder struct {
	sm      pmetric.ScopeMetrics
	metrics map[string]pmetric.Metric
}

func (b *builder) metric(s *series, name, unit, desc string) pmetric.Metric {
	rb := b.resources[s.resKey]
	if rb == nil {
		rm := b.md.ResourceMetrics().AppendEmpty()
		s.resource.CopyTo(rm.Resource().Attributes())
		sm := rm.ScopeMetrics().AppendEmpty()
		sm.Scope().SetName(metadata.ConnectorScopeName)
		rb = &resourceBuilder{sm: sm, metrics: map[string]pmetric.Metric{}}
		b.resources[s.resKey] = rb
	}
	m, ok := rb.metrics[name]
	if !ok {
		m = rb.sm.Metrics().AppendEmpty()
		m.SetName(name)
		m.SetUnit(unit)
		m.SetDescription(desc)
		rb.metrics[name] = m
	}
	return m
}

func (b *builder) temporality() pmetric.AggregationTemporality {
	if b.delta {
		return pmetric.AggregationTemporalityDelta
	}
	return pmetric.AggregationTemporalityCumulative
}

func (b *builder) sum(s *series, name, unit, desc string) pmetric.NumberDataPointSlice {
	m := b.metric(s, name, unit, desc)
	if m.Type() != pmetric.MetricTypeSum {
		sum := m.SetEmptySum()
		sum.SetIsMonotonic(true)
		sum.SetAggregationTemporality(b.temporality())
	}
	return m.Sum().DataPoints()
}

func (b *builder) gauge(s *series, name, unit, desc string) pmetric.NumberDataPointSlice {
	m := b.metric(s, name, unit, desc)
	if m.Type() != pmetric.MetricTypeGauge {
		m.SetEmptyGauge()
	}
	return m.Gauge().DataPoints()
}

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
	b := &builder{md: pmetric.NewMetrics(), resources: map[string]*resourceBuilder{}, delta: c.cfg.AggregationTemporality == temporalityDelta}
	ts := pcommon.NewTimestampFromTime(now)
	for i := range c.shards {
		sh := &c.shards[i]
		sh.mu.Lock()
		for key, s := range sh.series {
			if exp := c.cfg.SeriesExpiration; exp > 0 && now.Sub(s.lastSeen) > exp {
				delete(sh.series, key)
				c.count[s.layer].Add(-1)
				continue
			}
			c.emit(b, s, ts, now)
		}
		sh.mu.Unlock()
	}
	c.overMu.Lock()
	for _, s := range c.overflow {
		if s != nil {
			c.emit(b, s, ts, now)
		}
	}
	c.overMu.Unlock()
	return b.md
}

// emit writes one series' points, then resets it for delta temporality.
func (c *llmSLOConnector) emit(b *builder, s *series, ts pcommon.Timestamp, now time.Time) {
	point := func(dp pmetric.NumberDataPoint) pmetric.NumberDataPoint {
		s.dims.CopyTo(dp.Attributes())
		dp.SetStartTimestamp(s.start)
		dp.SetTimestamp(ts)
		return dp
	}
	for k := range numHistKinds {
		h := s.hists[k]
		if h == nil || b.delta && h.Count() == 0 {
			continue
		}
		unit := "s"
		if k == histInputTokens || k == histOutputTokens {
			unit = "{token}"
		}
		m := b.metric(s, histNames[k][s.layer], unit, histDescriptions[k])
		dp := h.AppendTo(m)
		if m.Type() == pmetric.MetricTypeExponentialHistogram {
			m.ExponentialHistogram().SetAggregationTemporality(b.temporality())
		} else {
			m.Histogram().SetAggregationTemporality(b.temporality())
		}
		s.dims.CopyTo(dp.Attributes())
		if tt, ok := tokenType[k]; ok {
			dp.Attributes().PutStr(attrTokenType, tt)
		}
		dp.SetStartTimestamp(s.start)
		dp.SetTimestamp(ts)
		if b.delta {
			h.Reset()
		}
	}
	for _, name := range s.sloKeys {
		sc := s.slos[name]
		for _, x := range [...]struct {
			metric, unit, desc string
			v                  *uint64
		}{
			{metricSLORequests, "{request}", "LLM requests an SLO selected (met + violated + unknown).", &sc.selected},
			{metricSLOMet, "{request}", "LLM requests that met every constraint of the SLO at once.", &sc.met},
			{metricSLOViolated, "{request}", "LLM requests that failed at least one constraint of the SLO, or failed.", &sc.violated},
			{metricSLOUnknown, "{request}", "LLM requests whose SLO verdict could not be decided (a value was missing); never counted as met.", &sc.unknown},
			{metricSLOTokensMet, "{token}", "Output tokens of the LLM requests that met the SLO (token goodput).", &sc.tokensMet},
		} {
			if b.delta && *x.v == 0 {
				continue
			}
			dp := point(b.sum(s, x.metric, x.unit, x.desc).AppendEmpty())
			dp.Attributes().PutStr(attrSLOName, name)
			dp.SetIntValue(int64(*x.v))
			if b.delta {
				*x.v = 0
			}
		}
		for _, constraint := range sc.violationKeys {
			n := sc.violations[constraint]
			if b.delta && n == 0 {
				continue
			}
			dp := point(b.sum(s, metricSLOViolations, "{violation}", "SLO constraints failed or undecidable, by constraint (ttft, tpot, itl, e2e, queue_time, error, or <constraint>:unknown).").AppendEmpty())
			dp.Attributes().PutStr(attrSLOName, name)
			dp.Attributes().PutStr(attrSLOConstraint, constraint)
			dp.SetIntValue(int64(n))
			if b.delta {
				sc.violations[constraint] = 0
			}
		}
		if r, ok := sc.goodput.Value(now); ok {
			dp := point(b.gauge(s, metricSLOGoodput, "1", "Share of the LLM requests an SLO selected that met it, over the sliding window (per collector replica).").AppendEmpty())
			dp.Attributes().PutStr(attrSLOName, name)
			dp.SetDoubleValue(r)
		}
	}
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
			dp := point(b.gauge(s, windowNames[w], "s", "Percentile over the sliding window (per collector replica; not mergeable across replicas: use the histograms for that).").AppendEmpty())
			dp.Attributes().PutStr(attrQuantile, strconv.FormatFloat(p/100, 'f', -1, 64))
			dp.SetDoubleValue(sk.Quantile(p / 100))
		}
	}
	if b.delta {
		s.start = ts
	}
}
