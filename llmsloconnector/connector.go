package llmsloconnector

import (
	"context"
	"hash/maphash"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/llmslo/llmslo/internal/aggregate"
	"github.com/llmslo/llmslo/internal/contract"
	"github.com/llmslo/llmslo/internal/derive"
	"github.com/llmslo/llmslo/internal/preset"
)

// numShards splits the series so that concurrent batches rarely contend on
// one lock; the flush visits the shards one at a time.
const numShards = 16

// sketchAlpha is the relative accuracy of the windowed percentiles: each
// order statistic within 0.5%, so the interpolated percentile is too, inside
// the 1% the project promises.
const sketchAlpha = 0.005

// llmSLOConnector aggregates the llm_slo processor's span attributes into
// series, one per dimension set and layer, and emits them on a ticker.
//
// Concurrency: series live in numShards maps, each behind its own mutex,
// chosen by a hash of the series key; ConsumeTraces locks one shard per
// span, never a global lock, so concurrent batches contend only when their
// spans hash to the same shard. A flush locks the shards one at a time
// (flushMu keeps flushes from overlapping) and sends the metrics after
// releasing them. The overflow series have their own mutex, taken only past
// the cardinality limit.
//
// Memory: nothing of an incoming batch is kept. Strings that outlive a call
// (dimension values, SLO names, constraint names) are copied when a series
// or counter is created; a span whose series exists allocates nothing (the
// key is built in pooled scratch and looked up with m[string(buf)]).
type llmSLOConnector struct {
	cfg    *Config
	keys   contract.Keys
	next   consumer.Metrics
	logger *zap.Logger
	tel    *telemetry
	now    func() time.Time

	maxSize  int32
	bounds   *[numHistKinds][]float64 // nil: exponential histograms
	sketch   *aggregate.SketchConfig
	events   *derive.EventReader
	instance string
	seed     maphash.Seed

	shards   [numShards]shard
	count    [numLayers]atomic.Int64 // live series per layer, overflow excluded
	overflow [numLayers]*series      // guarded by overMu
	overMu   sync.Mutex
	// lastFlush is the time of the previous flush (unix ns): the start of
	// a new series' first delta point.
	lastFlush atomic.Int64
	flushMu   sync.Mutex        // one flush at a time
	merged    *aggregate.Sketch // flush scratch; guarded by flushMu

	scratch sync.Pool // of *scratch

	// ticker returns the flush tick channel and its stop function; tests
	// replace it to drive flushes by hand.
	ticker func(time.Duration) (<-chan time.Time, func())
	stop   chan struct{}
	done   chan struct{}
}

// option is a test seam: the clock and the flush ticker.
type option func(*llmSLOConnector)

// withClock replaces time.Now.
func withClock(now func() time.Time) option {
	return func(c *llmSLOConnector) { c.now = now }
}

// withTicker makes the flush loop read ticks from ch instead of a
// time.Ticker of metrics_flush_interval.
func withTicker(ch <-chan time.Time) option {
	return func(c *llmSLOConnector) {
		c.ticker = func(time.Duration) (<-chan time.Time, func()) { return ch, func() {} }
	}
}

// withInstanceID fixes collector.instance.id (when it is on), so golden
// files are stable.
func withInstanceID(id string) option {
	return func(c *llmSLOConnector) { c.instance = id }
}

func realTicker(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}

type shard struct {
	mu     sync.Mutex
	series map[string]*series
}

// scratch is the per-call working memory of ConsumeTraces, pooled so that
// a span whose series exists allocates nothing.
type scratch struct {
	key    []byte
	obs    observation
	dims   []dimValue
	fields spanFields
	// Telemetry counts of one batch, added once per ConsumeTraces.
	rejected, overflowed int64
}

type dimValue struct{ name, value string }

func newConnector(set component.TelemetrySettings, cfg *Config, next consumer.Metrics, opts ...option) (*llmSLOConnector, error) {
	c := &llmSLOConnector{
		cfg: cfg, keys: contract.NewKeys(cfg.AttributePrefix), next: next, logger: set.Logger, now: time.Now,
		maxSize: defaultMaxSize, sketch: aggregate.NewSketchConfig(sketchAlpha),
		events: derive.NewEventReader(preset.DefaultEvents()), seed: maphash.MakeSeed(),
		ticker: realTicker,
	}
	for _, o := range opts {
		o(c)
	}
	c.merged = c.sketch.New()
	if e := cfg.Histogram.Exponential; e != nil && e.MaxSize != 0 {
		c.maxSize = e.MaxSize
	}
	if x := cfg.Histogram.Explicit; x != nil {
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
	if !cfg.CollectorInstanceID {
		c.instance = ""
	} else if c.instance == "" {
		c.instance = uuid.NewString()
	}
	for i := range c.shards {
		c.shards[i].series = map[string]*series{}
	}
	var err error
	if c.tel, err = newTelemetry(set.MeterProvider); err != nil {
		return nil, err
	}
	c.lastFlush.Store(c.now().UnixNano())
	return c, nil
}

func (c *llmSLOConnector) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: false}
}

// Start starts the flush loop: every metrics_flush_interval, the metrics of
// every series go to the next consumer.
func (c *llmSLOConnector) Start(context.Context, component.Host) error {
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
// without Start, and returns ctx's error if ctx ends first.
func (c *llmSLOConnector) Shutdown(ctx context.Context) error {
	stop, done := c.stop, c.done
	if stop == nil {
		return nil
	}
	c.stop = nil
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
		s.rejected, s.overflowed = 0, 0
		return s
	}
	n := len(c.cfg.Dimensions)
	return &scratch{fields: spanFields{extra: make([]string, n), extraOK: make([]bool, n)}}
}

// ConsumeTraces aggregates the LLM request spans of td. It keeps nothing of
// td: every string and map it retains is copied.
func (c *llmSLOConnector) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	sc := c.getScratch()
	defer c.scratch.Put(sc)
	now := c.now()
	var skipped int64
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		resource := rs.Resource().Attributes()
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				if !c.consumeSpan(spans.At(k), resource, sc, now) {
					skipped++
				}
			}
		}
	}
	if skipped > 0 {
		c.tel.skipped.Add(ctx, skipped)
	}
	if sc.rejected > 0 {
		c.tel.rejected.Add(ctx, sc.rejected)
	}
	if sc.overflowed > 0 {
		c.tel.overflow.Add(ctx, sc.overflowed)
	}
	return nil
}

// spanFields is what one pass over a span's attributes collects.
type spanFields struct {
	source, itlMax     bool
	layer              string
	model, respModel   string
	reqModel, provider string
	system, operation  string
	gaps               pcommon.Value
	hasGaps            bool
	extra              []string // values of cfg.Dimensions found on the span
	extraOK            []bool
}

// scan reads everything the connector needs from the span's attributes in
// one pass: a span carries a few dozen attributes, and one pass with a
// prefix test beats a lookup per field.
func (c *llmSLOConnector) scan(attrs pcommon.Map, o *observation, f *spanFields) {
	k := &c.keys
	prefix := k.Prefix
	for key, v := range attrs.All() {
		if len(key) > len(prefix) && key[:len(prefix)] == prefix {
			// Every key the processor writes is the prefix plus a fixed
			// suffix: a switch on constants is a few comparisons.
			switch key[len(prefix):] {
			case contract.SuffixSource:
				f.source = true
			case contract.SuffixLayer:
				f.layer = str(v)
			case contract.SuffixModel:
				f.model = str(v)
			case contract.SuffixTTFT:
				c.value(o, histTTFT, v)
			case contract.SuffixTPOT:
				c.value(o, histTPOT, v)
			case contract.SuffixE2E:
				c.value(o, histE2E, v)
			case contract.SuffixQueueTime:
				c.value(o, histQueue, v)
			case contract.SuffixInputTokens:
				c.value(o, histInputTokens, v)
			case contract.SuffixOutputTokens:
				c.value(o, histOutputTokens, v)
			case contract.SuffixITLMax:
				f.itlMax = true
			case contract.SuffixITLGaps:
				f.gaps, f.hasGaps = v, true
			default:
				if name, isMet, ok := k.ParseSLOKey(key); ok {
					so := o.slo(name)
					if isMet {
						if v.Type() == pcommon.ValueTypeBool {
							so.decided, so.met = true, v.Bool()
						}
					} else if v.Type() == pcommon.ValueTypeSlice {
						so.violations, so.hasViol = v.Slice(), true
					}
				}
			}
			continue
		}
		switch key {
		case "gen_ai.response.model":
			f.respModel = str(v)
		case "gen_ai.request.model":
			f.reqModel = str(v)
		case "gen_ai.provider.name":
			f.provider = str(v)
		case "gen_ai.system":
			f.system = str(v)
		case "gen_ai.operation.name":
			f.operation = str(v)
		}
		for i, d := range c.cfg.Dimensions {
			if key == d.Name && v.Type() == pcommon.ValueTypeStr {
				f.extra[i], f.extraOK[i] = v.Str(), true
			}
		}
	}
}

func str(v pcommon.Value) string {
	if v.Type() == pcommon.ValueTypeStr {
		return v.Str()
	}
	return ""
}

// value records a duration or count attribute; a negative, non-finite or
// wrongly typed one is counted and kept out of the histograms.
func (c *llmSLOConnector) value(o *observation, kind histKind, v pcommon.Value) {
	switch v.Type() {
	case pcommon.ValueTypeDouble:
		o.set(kind, v.Double())
	case pcommon.ValueTypeInt:
		o.set(kind, float64(v.Int()))
	}
	if !o.has[kind] {
		o.rejected++
	}
}

func firstOf(vals ...string) (string, bool) {
	for _, v := range vals {
		if v != "" {
			return v, true
		}
	}
	return "", false
}

// consumeSpan aggregates one span; false when it carries no processor output.
func (c *llmSLOConnector) consumeSpan(span ptrace.Span, resource pcommon.Map, sc *scratch, now time.Time) bool {
	o := &sc.obs
	*o = observation{gaps: o.gaps[:0], slos: o.slos[:0]}
	f := &sc.fields
	extra, extraOK := f.extra, f.extraOK
	*f = spanFields{extra: extra[:len(c.cfg.Dimensions)], extraOK: extraOK[:len(c.cfg.Dimensions)]}
	clear(f.extraOK)
	c.scan(span.Attributes(), o, f)
	if !f.source {
		return false
	}
	switch f.layer {
	case layerNames[layerServer]:
		o.layer = layerServer
	case layerNames[layerClient]:
		o.layer = layerClient
	default:
		return false
	}
	sc.rejected += int64(o.rejected)
	// Latency distributions describe successful requests (as vLLM's
	// statistics and the conventions' TTFT/TPOT metrics do); a failed span
	// adds only its duration, which the conventions record for failures too.
	failed := span.Status().Code() == ptrace.StatusCodeError
	if failed {
		*o = observation{layer: o.layer, slos: o.slos, gaps: o.gaps[:0]}
	}
	if start, end := span.StartTimestamp(), span.EndTimestamp(); start != 0 && end >= start {
		o.set(histDuration, float64(end-start)/1e9)
	}
	if !failed {
		if o.has[histOutputTokens] {
			o.tokens = uint64(o.values[histOutputTokens])
		}
		// Every gap: from the steps the processor joined, else the span's
		// own chunk events (only when the processor found two outputs).
		if f.hasGaps && f.gaps.Type() == pcommon.ValueTypeSlice {
			for _, g := range f.gaps.Slice().All() {
				if g.Type() == pcommon.ValueTypeDouble && g.Double() >= 0 && g.Double() <= derive.MaxSeconds {
					o.gaps = append(o.gaps, g.Double())
				}
			}
		} else if f.itlMax {
			o.gaps = c.events.Gaps(span, c.cfg.TokenAwareITL, o.gaps)
			o.gaps = slices.DeleteFunc(o.gaps, func(g float64) bool { return g > derive.MaxSeconds })
		}
	}

	// The series key: the layer, then each dimension's value; a value is
	// prefixed with 1 and ended by 0, an absent one is a single 0, so
	// different dimension sets never collide.
	key := append(sc.key[:0], byte(o.layer))
	dims := sc.dims[:0]
	add := func(name, value string, present bool) {
		if !present {
			key = append(key, 0)
			return
		}
		key = append(key, 1)
		key = append(key, value...)
		key = append(key, 0)
		dims = append(dims, dimValue{name, value})
	}
	model, okModel := firstOf(f.model, f.respModel, f.reqModel)
	add(attrRequestModel, model, okModel)
	provider, okProvider := firstOf(f.provider, f.system)
	add(attrProviderName, provider, okProvider)
	add(attrOperationName, f.operation, f.operation != "")
	for i, d := range c.cfg.Dimensions {
		v, ok := f.extra[i], f.extraOK[i]
		if !ok {
			v, ok = resourceStr(resource, d.Name)
		}
		if !ok && d.Default != nil {
			v, ok = *d.Default, true
		}
		add(d.Name, v, ok)
	}
	resStart := len(dims)
	for _, name := range c.cfg.ResourceDimensions {
		v, ok := resourceStr(resource, name)
		add(name, v, ok)
	}
	sc.key, sc.dims = key, dims

	sh := &c.shards[maphash.Bytes(c.seed, key)%numShards]
	sh.mu.Lock()
	s := sh.series[string(key)]
	if s == nil {
		s = c.newSeries(sh, key, dims, resStart, o.layer)
	}
	if s != nil {
		c.record(s, o, now)
		sh.mu.Unlock()
		return true
	}
	sh.mu.Unlock()
	// Over the cardinality limit: the layer's overflow series.
	c.overMu.Lock()
	c.record(c.overflowSeries(o.layer), o, now)
	c.overMu.Unlock()
	sc.overflowed++
	return true
}

func resourceStr(m pcommon.Map, key string) (string, bool) {
	if v, ok := m.Get(key); ok && v.Type() == pcommon.ValueTypeStr && v.Str() != "" {
		return v.Str(), true
	}
	return "", false
}

// newSeries creates the series of key in sh, or returns nil when the layer
// is at its cardinality limit. Caller holds sh.mu.
func (c *llmSLOConnector) newSeries(sh *shard, key []byte, dims []dimValue, resStart int, layer layerIndex) *series {
	// The OTel-Go rule: the limit counts the overflow series, so at most
	// limit-1 ordinary series exist per layer.
	if limit := int64(c.cfg.AggregationCardinalityLimit); limit > 0 {
		if c.count[layer].Add(1) > limit-1 {
			c.count[layer].Add(-1)
			return nil
		}
	} else {
		c.count[layer].Add(1)
	}
	s := &series{dims: pcommon.NewMap(), resource: pcommon.NewMap(), layer: layer, start: c.seriesStart()}
	s.dims.EnsureCapacity(len(dims) + 2)
	var resKey strings.Builder
	for i, d := range dims {
		if i >= resStart {
			s.resource.PutStr(d.name, cloneString(d.value))
			resKey.WriteString(d.name + "=" + d.value + "\x00")
			continue
		}
		s.dims.PutStr(d.name, cloneString(d.value))
	}
	s.dims.PutStr(c.keys.Layer, layerNames[layer])
	if c.instance != "" {
		s.dims.PutStr(attrCollectorInstance, c.instance)
	}
	s.resKey = resKey.String()
	sh.series[string(key)] = s
	return s
}

// seriesStart is the start timestamp of a new series: its creation for
// cumulative temporality (stable for the series' life), the previous flush
// for delta, so successive delta points tile time.
func (c *llmSLOConnector) seriesStart() pcommon.Timestamp {
	if c.cfg.AggregationTemporality == temporalityDelta {
		return pcommon.Timestamp(c.lastFlush.Load())
	}
	return pcommon.NewTimestampFromTime(c.now())
}

// overflowSeries returns the layer's overflow series: its attributes are
// otel.metric.overflow=true, the layer (the metric names differ by layer)
// and collector.instance.id (so replicas' overflow series stay apart).
// Caller holds overMu.
func (c *llmSLOConnector) overflowSeries(layer layerIndex) *series {
	if s := c.overflow[layer]; s != nil {
		return s
	}
	s := &series{dims: pcommon.NewMap(), resource: pcommon.NewMap(), layer: layer, start: c.seriesStart()}
	s.dims.PutBool(attrOverflow, true)
	s.dims.PutStr(c.keys.Layer, layerNames[layer])
	if c.instance != "" {
		s.dims.PutStr(attrCollectorInstance, c.instance)
	}
	c.overflow[layer] = s
	return s
}

func (o *observation) slo(name string) *sloObservation {
	for i := range o.slos {
		if o.slos[i].name == name {
			return &o.slos[i]
		}
	}
	o.slos = append(o.slos, sloObservation{name: name})
	return &o.slos[len(o.slos)-1]
}
