// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
	"context"
	"sync"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/llmslo/llmslo/internal/contract"
	"github.com/llmslo/llmslo/internal/registry"
	"github.com/llmslo/llmslo/llmsloconnector/internal/series"
)

// llmSLOConnector aggregates the llm_slo processor's span attributes into
// series, one per dimension set and layer, and emits them on a ticker.
//
// The path, all in this file: ConsumeTraces reads each span (spanReader:
// span.go, scan.go) into an observation, finds or creates its series in
// the sharded store (internal/series) and records the observation there
// under the series' shard lock; past the cardinality limit, in the layer's
// overflow series. Every metrics_flush_interval the flush loop writes
// every series' points (series.Points) and sends them after releasing the
// locks.
//
// Memory: nothing of an incoming batch is kept. Strings that outlive a call
// (dimension values, learned SLO names) are copied when a series or name is
// created; a span whose series exists allocates nothing (the key is built
// in pooled scratch).
type llmSLOConnector struct {
	spanReader
	next   consumer.Metrics
	logger *zap.Logger
	tel    *telemetry
	now    func() time.Time

	instance string
	series   *series.Store
	watch    unmatchedWatch
	// out is what a flush writes besides the series.
	out *series.Output
	// pressure are the pressure SLOs' thresholds by name; nil: off.
	pressure map[string]*pressureSpec
	flushMu  sync.Mutex // one flush at a time; guards out.Merged

	scratch sync.Pool // of *scratch

	// ticker returns the flush tick channel and its stop function; tests
	// replace it to drive flushes by hand.
	ticker    func(time.Duration) (<-chan time.Time, func())
	lifecycle sync.Mutex // guards stop and done
	stop      chan struct{}
	done      chan struct{}
}

func newConnector(set component.TelemetrySettings, cfg *Config, next consumer.Metrics, opts ...option) (*llmSLOConnector, error) {
	c := &llmSLOConnector{next: next, logger: set.Logger, now: time.Now, ticker: realTicker}
	for _, o := range opts {
		o(c)
	}
	c.spanReader = newSpanReader(cfg)
	if !cfg.CollectorInstanceID {
		c.instance = ""
	} else if c.instance == "" {
		c.instance = uuid.NewString()
	}
	shape := shapeOf(cfg, c.names)
	c.series = series.NewStore(shape, int64(cfg.AggregationCardinalityLimit),
		cfg.AggregationTemporality == temporalityDelta, c.instance, c.now)
	c.series.SetLayerKey(c.src.keys.Layer)
	c.out = c.names.output(cfg)
	c.out.Merged = shape.Sketch.New()
	c.pressure = pressureSpecs(&cfg.Pressure)
	var err error
	if c.tel, err = newTelemetry(set.MeterProvider); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *llmSLOConnector) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: false}
}

// Start learns from the registry where the processor writes, which SLOs it
// judges and their thresholds for the pressure gauge (refusing a
// configuration that contradicts it), then starts the flush loop: every
// metrics_flush_interval, the metrics of every series go to the next
// consumer.
func (c *llmSLOConnector) Start(context.Context, component.Host) error {
	procs := registry.Processors()
	src, err := resolveSource(c.cfg.AttributePrefix, procs)
	if err != nil {
		return err
	}
	pressure, err := resolvePressure(&c.cfg.Pressure, src, procs)
	if err != nil {
		return err
	}
	c.src, c.pressure = src, pressure
	c.series.SetLayerKey(src.keys.Layer)
	c.logStart()
	c.lifecycle.Lock()
	defer c.lifecycle.Unlock()
	stop, done := make(chan struct{}), make(chan struct{})
	c.stop, c.done = stop, done
	tick, stopTicker := c.ticker(c.cfg.MetricsFlushInterval)
	go func() {
		defer close(done)
		defer stopTicker()
		for {
			select {
			case <-stop:
				return
			case <-tick:
				c.flush(context.Background())
			}
		}
	}()
	return nil
}

// Shutdown stops the flush loop and flushes what is pending. It is safe
// without Start and a second time, and returns ctx's error if ctx ends
// first.
func (c *llmSLOConnector) Shutdown(ctx context.Context) error {
	c.lifecycle.Lock()
	stop, done := c.stop, c.done
	c.stop = nil
	c.lifecycle.Unlock()
	if stop == nil {
		return nil
	}
	close(stop)
	select {
	case <-done:
	case <-ctx.Done():
		return ctx.Err()
	}
	c.flush(ctx)
	return nil
}

// ConsumeTraces aggregates the LLM request spans of td. It keeps nothing of
// td: every string and map it retains is copied. A re-send of the
// processor's held spans (contract.Resent) was counted at its first send,
// which reached this connector beside the consumer that refused it.
func (c *llmSLOConnector) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	if contract.Resent(ctx) {
		return nil
	}
	sc := c.getScratch()
	defer c.putScratch(sc)
	now := c.now()
	var consumed, skipped int64
	var firstSkipped ptrace.Span
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		sc.resource.read(rs.Resource().Attributes(), c.cfg)
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				span := spans.At(k)
				if c.consumeSpan(span, sc, now) {
					consumed++
					continue
				}
				if skipped == 0 {
					firstSkipped = span
				}
				skipped++
			}
		}
	}
	c.watch.batch(c, consumed, skipped, firstSkipped, now)
	c.tel.record(ctx, skipped, sc)
	return nil
}

// consumeSpan reads one span and records it in its series, under the
// series' shard lock, or past the cardinality limit in its layer's
// overflow series; false when it carries no processor output.
func (c *llmSLOConnector) consumeSpan(span ptrace.Span, sc *scratch, now time.Time) bool {
	if !c.observe(span, sc) {
		return false
	}
	o := &sc.obs
	key, dims, resStart := c.seriesKey(sc)
	sh := c.series.Lock(key)
	if s := c.series.Series(sh, key, o.layer, dims, resStart); s != nil {
		o.addTo(s, now, sh.Round(o.adjusted), c.src.names)
		sh.Unlock()
		return true
	}
	sh.Unlock()
	s, n := c.series.LockOverflow(o.layer, o.adjusted)
	o.addTo(s, now, n, c.src.names)
	c.series.UnlockOverflow()
	sc.overflowed++
	return true
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
	points := series.NewPoints(c.out, c.src.names.name, c.pressure, now)
	c.series.Each(now, c.cfg.SeriesExpiration, points.Emit)
	return points.Metrics()
}

// logStart says where the connector reads, once.
func (c *llmSLOConnector) logStart() {
	if len(c.src.processors) == 0 {
		c.logger.Info("no llm_slo processor in this collector: reading the attributes an earlier tier wrote",
			zap.String("attribute_prefix", c.src.keys.Prefix), zap.Int("max_slo_names", maxLearnedSLONames))
		return
	}
	c.logger.Info("reading the llm_slo processors' attributes", zap.Strings("processors", c.src.processors),
		zap.String("attribute_prefix", c.src.keys.Prefix))
}
