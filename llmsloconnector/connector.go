// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
	"context"
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/llmslo/llmslo/internal/adjusted"
	"github.com/llmslo/llmslo/internal/aggregate"
	"github.com/llmslo/llmslo/internal/contract"
	"github.com/llmslo/llmslo/internal/registry"
)

// numShards splits the series so that concurrent batches rarely contend on
// one lock; the flush visits the shards one at a time.
const numShards = 16

// sketchAlpha is the relative accuracy of the windowed percentiles: each
// order statistic within 0.39% (89 buckets per octave), so the
// interpolated percentile is too, inside the 1% the project promises.
const sketchAlpha = 0.0039

// llmSLOConnector aggregates the llm_slo processor's span attributes into
// series, one per dimension set and layer, and emits them on a ticker.
//
// Concurrency: series live in numShards maps, each behind its own mutex,
// chosen by a hash of the series key; ConsumeTraces locks one shard per
// span, never a global lock, so concurrent batches contend only when their
// spans hash to the same shard. A flush locks the shards one at a time
// (flushMu keeps flushes from overlapping) and sends the metrics after
// releasing them. The overflow series have their own mutex (limit.go).
//
// Memory: nothing of an incoming batch is kept. Strings that outlive a call
// (dimension values, learned SLO names) are copied when a series or name is
// created; a span whose series exists allocates nothing (the key is built
// in pooled scratch and looked up with m[string(buf)]).
type llmSLOConnector struct {
	cfg    *Config
	next   consumer.Metrics
	logger *zap.Logger
	tel    *telemetry
	now    func() time.Time
	// src is where the processor's attributes are read and which SLO
	// names count; set at creation and again at Start, before any span.
	src *source
	// otherLens are the lengths of the keys scanOther reads.
	otherLens keyLengths
	// names are the metric names of the configured convention version.
	names *metricNames
	// classes are input_token_classes; nil when off.
	classes *inputClasses

	maxSize  int32
	bounds   *[numHistKinds][]float64 // nil: exponential histograms
	sketch   *aggregate.SketchConfig
	instance string
	seed     maphash.Seed

	shards [numShards]shard
	limits limiter
	watch  unmatchedWatch
	// lastFlush is the time of the previous flush (unix ns): the start of
	// a new series' first delta point.
	lastFlush atomic.Int64
	flushMu   sync.Mutex        // one flush at a time
	merged    *aggregate.Sketch // flush scratch; guarded by flushMu
	// pressure are the pressure SLOs' thresholds by name; nil: off.
	pressure map[string]*pressureSpec
	live     []liveEntry // flush scratch; guarded by flushMu

	scratch sync.Pool // of *scratch

	// ticker returns the flush tick channel and its stop function; tests
	// replace it to drive flushes by hand.
	ticker    func(time.Duration) (<-chan time.Time, func())
	lifecycle sync.Mutex // guards stop and done
	stop      chan struct{}
	done      chan struct{}
}

type shard struct {
	mu     sync.Mutex
	series map[string]*series
	// rounder turns adjusted counts into whole counts; guarded by mu.
	rounder *adjusted.Rounder
}

// scratch is the per-call working memory of ConsumeTraces, pooled so that
// a span whose series exists allocates nothing.
type scratch struct {
	key    []byte
	obs    observation
	dims   []dimValue
	fields spanFields
	// resource holds the dimension values of the resource being read.
	resource resourceValues
	// Telemetry counts of one batch, added once per ConsumeTraces.
	rejected, ignored, overflowed, malformedTracestate int64
	labels                                             labelFixes
	// The last tracestate read and its adjusted count; lastTS points into
	// the batch, so ConsumeTraces clears it before the scratch is pooled.
	lastTS      string
	lastTSRead  bool
	lastN       float64
	lastOutcome adjusted.Outcome
}

func newConnector(set component.TelemetrySettings, cfg *Config, next consumer.Metrics, opts ...option) (*llmSLOConnector, error) {
	c := &llmSLOConnector{
		cfg: cfg, next: next, logger: set.Logger, now: time.Now,
		maxSize: defaultMaxSize, sketch: aggregate.NewSketchConfig(sketchAlpha),
		seed: maphash.MakeSeed(), ticker: realTicker,
		limits: limiter{limit: int64(cfg.AggregationCardinalityLimit)},
	}
	for _, o := range opts {
		o(c)
	}
	c.merged = c.sketch.New()
	c.otherLens = lengthsOf(keyProviderName, keySystem, keyOperationName)
	for _, d := range cfg.Dimensions {
		c.otherLens |= lengthsOf(d.Name)
	}
	c.names = namesFor(cfg.MetricNames)
	c.pressure = pressureSpecs(&cfg.Pressure)
	c.classes = newInputClasses(cfg.InputTokenClasses)
	c.setHistograms()
	if !cfg.CollectorInstanceID {
		c.instance = ""
	} else if c.instance == "" {
		c.instance = uuid.NewString()
	}
	// Fixed seeds: the rounding is unbiased whatever the seed, and a run
	// is reproducible.
	for i := range c.shards {
		c.shards[i].series = map[string]*series{}
		c.shards[i].rounder = adjusted.NewRounder(uint64(i) + 1)
	}
	c.limits.rounder = adjusted.NewRounder(numShards + 1)
	// A provisional source: Start resolves it again once every processor
	// of the collector has registered.
	var err error
	if c.src, err = resolveSource(cfg.AttributePrefix, registry.Processors()); err != nil {
		c.src, _ = resolveSource(cfg.AttributePrefix, nil)
	}
	if c.tel, err = newTelemetry(set.MeterProvider); err != nil {
		return nil, err
	}
	c.lastFlush.Store(c.now().UnixNano())
	return c, nil
}

// setHistograms picks the histogram shape: exponential of max_size buckets,
// or explicit with the configured bounds per kind.
func (c *llmSLOConnector) setHistograms() {
	if e := c.cfg.Histogram.Exponential; e != nil && e.MaxSize != 0 {
		c.maxSize = e.MaxSize
	}
	x := c.cfg.Histogram.Explicit
	if x == nil {
		return
	}
	var b [numHistKinds][]float64
	for k := range numHistKinds {
		kind := histBucketKind[k]
		b[k] = defaultBuckets[kind]
		if custom, ok := x.Buckets[kind]; ok {
			b[k] = custom
		}
	}
	c.bounds = &b
}

func (c *llmSLOConnector) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: false}
}

// Start learns from the registry where the processor writes, which SLOs it
// judges and their thresholds for the pressure gauge (refusing a
// configuration that contradicts it), then starts the
// flush loop: every metrics_flush_interval, the metrics of every series go
// to the next consumer.
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

func (c *llmSLOConnector) getScratch() *scratch {
	if s, ok := c.scratch.Get().(*scratch); ok {
		s.rejected, s.ignored, s.overflowed, s.malformedTracestate, s.labels = 0, 0, 0, 0, labelFixes{}
		return s
	}
	n := len(c.cfg.Dimensions)
	return &scratch{fields: spanFields{extra: make([]string, n), extraOK: make([]bool, n)}}
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
	defer func() {
		sc.lastTS, sc.lastTSRead = "", false
		sc.fields.clear()
		sc.resource.clear()
		clear(sc.obs.slos[:cap(sc.obs.slos)]) // their names point into the batch
		c.scratch.Put(sc)
	}()
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
