// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/llmslo/llmslo/internal/contract"
	"github.com/llmslo/llmslo/internal/derive"
	"github.com/llmslo/llmslo/internal/metadata"
	"github.com/llmslo/llmslo/internal/preset"
	"github.com/llmslo/llmslo/internal/slo"
	"github.com/llmslo/llmslo/tools/internal/report/schema"
)

// Options configure an Engine.
type Options struct {
	// Processor is the llm_slo processor the spans run through (required).
	Processor Processor
	// ProcessorID names where its configuration came from, for the report.
	ProcessorID string
	// By lists the group dimensions: "model" (llm.model), "layer"
	// (llm.layer), "preset" (the producer preset), or any span attribute,
	// then resource attribute, key (e.g. service.name). Default model,layer.
	By []string
	// MaxGaps bounds the inter-token gaps kept for exact pooled percentiles
	// (8 bytes each); beyond it pools switch to a sketch. 0: 64 Mi.
	MaxGaps int64
	// Top is how many slowest requests to list per metric (default 10).
	Top int
	// Workers bounds the pieces of the inputs decoded and run through the
	// processor at once (0: one per core, GOMAXPROCS). The report is the
	// same for any number.
	Workers int
	// MaxGroups bounds the groups, the overflow group included (0:
	// DefaultMaxGroups): past it, the requests of new dimension values
	// are counted in the overflow group, so a dimension of unbounded
	// values (a request ID, a million models) costs bounded memory and a
	// report of bounded length.
	MaxGroups int
	// CapacityBy lists the resource attributes that name a server-layer
	// request's replica for the capacity, the first present wins (default
	// DefaultCapacityBy; at most 16).
	CapacityBy []string
	// CapacityMinRequests is the fewest requests of a load level before
	// adjacent levels merge (0: DefaultCapacityMinRequests).
	CapacityMinRequests int
}

// Processor is the llm_slo processor as the engine runs it: the
// component's own factory and configuration, so the spans are processed
// exactly as a collector would, and the parts of that configuration the
// engine reads itself. NewProcessor fills it.
type Processor struct {
	Factory processor.Factory
	// Config is the factory's configuration, validated.
	Config          component.Config
	AttributePrefix string
	TokenAwareITL   bool
	// Assembles is trace_assembly.enabled: the processor then holds spans
	// across batches, so the engine reads its inputs on one core.
	Assembles bool
	SLOs      []slo.Definition
	// Events are the chunk events of every preset, by name.
	Events map[string]preset.Events
}

// Config is the processor's configuration as NewProcessor reads it: the
// factory takes it whole, and the engine reads back the settings it applies
// itself. The llm_slo processor's Config implements it; taking it through
// an interface keeps this package from importing the processor.
type Config interface {
	component.Config
	// Prefix is the attribute_prefix the processor writes under.
	Prefix() string
	// ITLTokenAware is token_aware_itl.
	ITLTokenAware() bool
	// AssemblesTraces is trace_assembly.enabled.
	AssemblesTraces() bool
	SLODefinitions() []slo.Definition
	PresetEvents() map[string]preset.Events
}

// NewProcessor is the processor factory builds from cfg, as the engine
// runs it. cfg must be validated.
func NewProcessor(factory processor.Factory, cfg Config) Processor {
	return Processor{
		Factory: factory, Config: cfg, AttributePrefix: cfg.Prefix(),
		TokenAwareITL: cfg.ITLTokenAware(), Assembles: cfg.AssemblesTraces(), SLOs: cfg.SLODefinitions(), Events: cfg.PresetEvents(),
	}
}

// DefaultMaxGroups is the default of Options.MaxGroups.
const DefaultMaxGroups = 1000

// DefaultBy is the default grouping.
var DefaultBy = []string{"model", "layer"}

// Engine runs spans through the llm_slo processor in-process and keeps a
// compact record per LLM request span: the report is computed from those
// records, so memory grows with requests, not spans or events.
type Engine struct {
	opts  Options
	keys  contract.Keys
	proc  processor.Traces
	slos  []sloDef
	sloIx map[string]int
	// events names each preset's chunk events (built-ins and the
	// configuration's custom presets).
	events     map[string]*preset.Events
	eventNames map[string]bool
	tokenAware bool

	mu sync.Mutex // the processor may emit held spans from its own goroutine

	spans    atomic.Int64
	requests atomic.Int64
	failed   int64
	minStart int64
	maxEnd   int64

	recs     blocks[record]
	verdicts blocks[uint16]   // len(slos) per record
	causes   blocks[causeSet] // len(slos) per record (attribution.go)
	streams  blocks[streamRec]
	groups   []schema.Group
	groupIx  map[string]uint32
	// overflowID is the overflow group's index + 1 (0: none yet);
	// overflowed counts the requests it holds.
	overflowID uint32
	overflowed int64
	keyBuf     []byte
	budget     atomic.Int64
	// gaps per group: the llmslo ITL of requests in the definitions
	// (defs) and of the others (rest), so neither is stored twice.
	gapsDefs, gapsRest []*pool
	// Tool gap pools (see defs.go): content-chunk gaps of requests without
	// zero-count chunks among their choices (plain), of requests with them
	// (contentZ), and the choices-chunk gaps of the latter (choicesZ).
	plain, contentZ, choicesZ *pool
	slowest                   [numMetrics]topK
	misses                    []topK   // per SLO, by E2E
	replicas                  replicas // capacity.go

	scratch struct {
		batch batch // consume's, under mu
		dims  []string
	}
}

// sloDef is one SLO of the configuration.
type sloDef struct {
	name   string
	limits []slo.Threshold // in the order of constraintNames
	// excludeUnknown: goodput is over the decidable requests only
	// (unknown_verdicts: exclude), as the rules and the connector count it.
	excludeUnknown bool
	// objective is the share of requests that must meet the SLO, 0 to 1;
	// 0 when none is configured.
	objective float64
}

// Verdict bits, one uint16 per SLO per record: selected, error, then a
// field of constraintBits failure bits and one of unknown bits, each in
// constraintNames order: a bit per constraint of the contract.
const (
	constraintBits = contract.NumConstraints
	vSelected      = 1 << 0
	vError         = 1 << 1
	vFailShift     = 2
	vUnkShift      = vFailShift + constraintBits
	vConstrMask    = 1<<constraintBits - 1
)

// Seven constraints fill the uint16; an eighth fails to compile here
// (widen the verdicts first) rather than overflow into another field.
var _ [16 - (vUnkShift + constraintBits)]struct{}

// record is what is kept of one LLM request span (72 bytes: replica fills
// the padding after failed).
type record struct {
	start int64 // span start, Unix ns
	dur   int64 // span end - start, ns
	// Seconds; NaN when the span does not carry the value.
	ttft, tpot, e2e, itlMax, queue float64
	outTokens                      int32
	group                          uint32
	failed                         bool
	// replica is a server-layer request's replica index + 1 (capacity.go),
	// 0 for none.
	replica uint32
}

// The metrics of the latency table, in report order.
const (
	mTTFT = iota
	mTPOT
	mITL
	mE2E
	mQueue
	numMetrics
)

var metricIDs = [numMetrics]string(schema.MetricIDs)

// cdfPoints bounds the order statistics kept per group and metric for the
// HTML plots.
const cdfPoints = 400

// NewEngine builds the processor from opts.Processor exactly as a
// collector would (its public factory) and starts it.
func NewEngine(ctx context.Context, opts Options) (*Engine, error) {
	proc := &opts.Processor
	if proc.Factory == nil || proc.Config == nil {
		return nil, errors.New("report: no llm_slo processor to run the spans through")
	}
	if len(opts.By) == 0 {
		opts.By = DefaultBy
	}
	if opts.MaxGaps <= 0 {
		opts.MaxGaps = 64 << 20
	}
	if opts.Top <= 0 {
		opts.Top = 10
	}
	if opts.MaxGroups <= 0 {
		opts.MaxGroups = DefaultMaxGroups
	}
	if len(opts.CapacityBy) == 0 {
		opts.CapacityBy = DefaultCapacityBy
	}
	if len(opts.CapacityBy) > maxCapacityBy {
		return nil, fmt.Errorf("report: %d replica attributes: at most %d", len(opts.CapacityBy), maxCapacityBy)
	}
	if opts.CapacityMinRequests <= 0 {
		opts.CapacityMinRequests = DefaultCapacityMinRequests
	}
	e := &Engine{
		opts: opts, keys: contract.NewKeys(proc.AttributePrefix), sloIx: map[string]int{},
		events: map[string]*preset.Events{}, eventNames: map[string]bool{},
		tokenAware: proc.TokenAwareITL, groupIx: map[string]uint32{},
		minStart: math.MaxInt64, maxEnd: math.MinInt64,
	}
	e.budget.Store(opts.MaxGaps)
	e.plain, e.contentZ, e.choicesZ = newPool(&e.budget), newPool(&e.budget), newPool(&e.budget)
	for i := range e.slowest {
		e.slowest[i].k = opts.Top
	}
	for _, s := range proc.SLOs {
		e.sloIx[s.Name] = len(e.slos)
		e.slos = append(e.slos, sloDef{name: s.Name, limits: s.Limits.Ordered(), excludeUnknown: s.ExcludeUnknown, objective: s.Objective / 100})
		e.misses = append(e.misses, topK{k: opts.Top})
	}
	e.presetEvents(proc.Events)
	next, err := consumer.NewTraces(e.consume)
	if err != nil {
		return nil, err
	}
	set := processortest.NewNopSettings(metadata.Type)
	e.proc, err = proc.Factory.CreateTraces(ctx, set, proc.Config, next)
	if err != nil {
		return nil, err
	}
	if err := e.proc.Start(ctx, componenttest.NewNopHost()); err != nil {
		return nil, err
	}
	return e, nil
}

// presetEvents learns each preset's chunk events.
func (e *Engine) presetEvents(events map[string]preset.Events) {
	for name, ev := range events {
		e.events[name] = &ev
		for _, c := range ev.Chunk {
			e.eventNames[c] = true
		}
	}
}

// Consume runs one batch of spans through the processor.
func (e *Engine) Consume(ctx context.Context, td ptrace.Traces) error {
	e.spans.Add(int64(td.SpanCount()))
	return e.proc.ConsumeTraces(ctx, td)
}

// Close shuts the processor down, which releases any span the trace
// assembly still holds.
func (e *Engine) Close(ctx context.Context) error {
	return e.proc.Shutdown(ctx)
}

// Spans and Requests count what was seen so far (for progress reports).
func (e *Engine) Spans() int64    { return e.spans.Load() }
func (e *Engine) Requests() int64 { return e.requests.Load() }

// consume receives the processor's output: every span, enriched. Called
// by a parallel reader's worker (a *batch in ctx, see ingest.go), it only
// reads the spans into that batch, for the reader to apply in input order;
// otherwise (one core, or spans the trace assembly releases from its own
// goroutine) it applies them at once.
func (e *Engine) consume(ctx context.Context, td ptrace.Traces) error {
	if b, ok := ctx.Value(batchKey{}).(*batch); ok {
		e.extractAll(td, b)
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	b := &e.scratch.batch
	b.reset()
	e.extractAll(td, b)
	e.applyAll(b)
	return nil
}

// extractAll reads every LLM request span of td into b.
func (e *Engine) extractAll(td ptrace.Traces, b *batch) {
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		res := rs.Resource().Attributes()
		replica := e.replicaOf(res)
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				e.extract(spans.At(k), res, replica, b)
			}
		}
	}
}

// spanView is what add reads off one enriched span.
type spanView struct {
	source, model, layer string
	gaps, weights        gapList
	hasGaps, hasWeights  bool
	// parts of the request's latency; serverQueue is the engine's queue
	// on a client span joined to its engine span.
	parts       parts
	serverQueue float64
}

// batch holds the rows extract read off one processed piece, in span
// order, and what they point into.
type batch struct {
	rows     []row
	verdicts []uint16   // len(slos) per row
	causes   []causeSet // len(slos) per row
	// times and counts hold one span's chunk events at a time (see
	// Engine.chunks).
	times, counts []int64
	// gaps and weights hold the rows' llmslo gaps, the others the tool
	// gaps of their streams (chunkGaps), all ready for the pools.
	gaps                      []float64
	weights                   []uint32
	plain, contentZ, choicesZ []float64
}

func (b *batch) reset() {
	clear(b.rows) // the spans of the pieces before
	b.rows, b.verdicts, b.causes = b.rows[:0], b.verdicts[:0], b.causes[:0]
	b.times, b.counts = b.times[:0], b.counts[:0]
	b.gaps, b.weights = b.gaps[:0], b.weights[:0]
	b.plain, b.contentZ, b.choicesZ = b.plain[:0], b.contentZ[:0], b.choicesZ[:0]
}

// extent is a row's part of one of its batch's slices.
type extent struct{ from, to int }

// row is one LLM request span as extract read it: everything that needs
// none of the engine's shared state, so that it is read on any core.
type row struct {
	span    ptrace.Span
	res     pcommon.Map
	replica replicaName
	end     int64
	r       record
	v       spanView
	// inDefs: the request is in the definitions, with stream.
	inDefs bool
	stream streamRec
	// The row's parts of the batch's gaps, weights (when weighted) and
	// tool gaps.
	gaps, plain, contentZ, choicesZ extent
	weighted                        bool
}

// extract reads one span into b when it is an LLM request span.
func (e *Engine) extract(span ptrace.Span, res pcommon.Map, replica replicaName, b *batch) {
	attrs := span.Attributes()
	src, ok := attrs.Get(e.keys.Source)
	if !ok || src.Type() != pcommon.ValueTypeStr {
		return // not an LLM request span
	}
	start, end := int64(span.StartTimestamp()), int64(span.EndTimestamp())
	w := row{span: span, res: res, replica: replica, end: end,
		r: record{start: start, dur: max(0, end-start), ttft: math.NaN(), tpot: math.NaN(), e2e: math.NaN(),
			itlMax: math.NaN(), queue: math.NaN(), outTokens: -1, failed: span.Status().Code() == ptrace.StatusCodeError},
		v: spanView{source: src.Str(), parts: unknownParts(), serverQueue: math.NaN()}}
	base := len(b.verdicts)
	for range e.slos {
		b.verdicts = append(b.verdicts, 0)
		b.causes = append(b.causes, 0)
	}
	e.readAttrs(attrs, &w.r, &w.v, b.verdicts[base:], b.causes[base:])
	if math.IsNaN(w.v.parts[partQueue]) {
		w.v.parts[partQueue] = w.v.serverQueue
	}
	if !w.r.failed {
		e.streamGaps(span, &w, b)
		b.llmsloGaps(&w)
	}
	b.rows = append(b.rows, w)
}

// streamGaps reads the span's chunk events into the row's stream and b's
// tool gaps, when the request is in the definitions.
func (e *Engine) streamGaps(span ptrace.Span, w *row, b *batch) {
	presetName, _, _ := strings.Cut(w.v.source, ":")
	var ok bool
	b.times, b.counts, ok = e.chunks(span, presetName, b.times[:0], b.counts[:0])
	times, counts := b.times, b.counts
	if !ok {
		return
	}
	w.stream, w.inDefs = streamOf(span, w.v.source, w.r.outTokens, times, counts)
	if w.inDefs {
		last := int(w.stream.events)
		b.chunkGaps(w, times[:last], counts[:last], w.stream.contents == w.stream.events)
	}
}

// verdict is record k's verdict on SLO i (len(slos) verdicts per record).
func (e *Engine) verdict(k, i int) uint16 { return *e.verdicts.at(k*len(e.slos) + i) }

// cause is record k's causes of its verdict on SLO i.
func (e *Engine) cause(k, i int) causeSet { return *e.causes.at(k*len(e.slos) + i) }

// applyAll adds b's rows to the engine, in order. The caller holds e.mu.
func (e *Engine) applyAll(b *batch) {
	ns := len(e.slos)
	for i := range b.rows {
		e.apply(b, &b.rows[i], b.verdicts[i*ns:(i+1)*ns], b.causes[i*ns:(i+1)*ns])
	}
}

// apply adds one request of b: its record, group, verdicts, the slowest
// lists, the tools' streams and the gap pools, in the order requests
// arrive, so that the report does not depend on how many cores read them.
func (e *Engine) apply(b *batch, w *row, verdicts []uint16, causes []causeSet) {
	e.requests.Add(1)
	idx := e.recs.count()
	r, v := w.r, &w.v
	if r.start > 0 && r.start < e.minStart {
		e.minStart = r.start
	}
	if w.end > 0 && w.end > e.maxEnd {
		e.maxEnd = w.end
	}
	if r.failed {
		e.failed++
	}
	e.verdicts.addSlice(verdicts)
	e.causes.addSlice(causes)
	r.group = e.groupOf(w.span.Attributes(), w.res, v)
	r.replica = e.replicas.place(w.replica, v.layer, r.start)
	e.recs.add(r)
	e.addMisses(idx, w.span, &v.parts)
	e.slowest[mTTFT].add(r.ttft, w.span, idx)
	e.slowest[mTPOT].add(r.tpot, w.span, idx)
	e.slowest[mITL].add(r.itlMax, w.span, idx)
	e.slowest[mE2E].add(r.e2e, w.span, idx)
	e.slowest[mQueue].add(r.queue, w.span, idx)
	if r.failed {
		return // latency distributions describe successful requests
	}
	if w.inDefs {
		s := w.stream
		s.rec = int32(idx)
		e.streams.add(s)
		e.plain.addAll(b.plain[w.plain.from:w.plain.to], nil)
		e.contentZ.addAll(b.contentZ[w.contentZ.from:w.contentZ.to], nil)
		e.choicesZ.addAll(b.choicesZ[w.choicesZ.from:w.choicesZ.to], nil)
	}
	p := e.gapsRest[r.group]
	if w.inDefs {
		p = e.gapsDefs[r.group]
	}
	var ws []uint32
	if w.weighted {
		ws = b.weights[w.gaps.from:w.gaps.to]
	}
	p.addAll(b.gaps[w.gaps.from:w.gaps.to], ws)
}

// readAttrs reads what the processor wrote on the span in one pass over its
// attributes: the values into r, the rest into v, the SLO verdicts and
// causes into verdicts and causes (one per SLO).
func (e *Engine) readAttrs(attrs pcommon.Map, r *record, v *spanView, verdicts []uint16, causes []causeSet) {
	prefix := e.keys.Prefix
	attrs.Range(func(k string, val pcommon.Value) bool {
		rest, found := strings.CutPrefix(k, prefix)
		if !found {
			return true
		}
		switch rest {
		case contract.SuffixTTFT:
			r.ttft = seconds(val)
		case contract.SuffixTPOT:
			r.tpot = seconds(val)
		case contract.SuffixE2E:
			r.e2e = seconds(val)
		case contract.SuffixITLMax:
			r.itlMax = seconds(val)
		case contract.SuffixQueueTime:
			r.queue = seconds(val)
			v.parts[partQueue] = r.queue
		case contract.SuffixServerQueueTime:
			v.serverQueue = seconds(val)
		case contract.SuffixPrefillTime:
			v.parts[partPrefill] = seconds(val)
		case contract.SuffixKVTransferTime:
			v.parts[partKVTransfer] = seconds(val)
		case contract.SuffixNetworkTime:
			v.parts[partNetwork] = seconds(val)
		case contract.SuffixDecodeTime:
			v.parts[partDecode] = seconds(val)
		case contract.SuffixOutputTokens:
			if val.Type() == pcommon.ValueTypeInt && val.Int() >= 0 && val.Int() <= math.MaxInt32 {
				r.outTokens = int32(val.Int())
			}
		case contract.SuffixModel:
			v.model = val.AsString()
		case contract.SuffixLayer:
			v.layer = val.AsString()
		case contract.SuffixITLGaps:
			v.gaps, v.hasGaps = gapListOf(val, contract.GapBytes)
		case contract.SuffixITLGapWeights:
			v.weights, v.hasWeights = gapListOf(val, contract.WeightBytes)
		default:
			if name, met, ok := e.keys.ParseSLOKey(k); ok {
				if i, ok := e.sloIx[name]; ok {
					verdicts[i] |= verdictBits(met, val)
				}
			} else if name, ok := e.keys.ParseSLOCausesKey(k); ok {
				if i, ok := e.sloIx[name]; ok {
					causes[i] = causeBitsOf(val)
				}
			}
		}
		return true
	})
}

func verdictBits(met bool, val pcommon.Value) uint16 {
	bits := uint16(vSelected)
	if met {
		return bits
	}
	if val.Type() != pcommon.ValueTypeSlice {
		return bits
	}
	s := val.Slice()
	for i := 0; i < s.Len(); i++ {
		name := s.At(i).AsString()
		if name == contract.ViolationError {
			bits |= vError
			continue
		}
		c, unknown := strings.CutSuffix(name, contract.UnknownSuffix)
		if j := slices.Index(constraintNames, c); j >= 0 {
			if unknown {
				bits |= 1 << (vUnkShift + j)
			} else {
				bits |= 1 << (vFailShift + j)
			}
		}
	}
	return bits
}

func seconds(v pcommon.Value) float64 {
	switch v.Type() {
	case pcommon.ValueTypeDouble:
		return v.Double()
	case pcommon.ValueTypeInt:
		return float64(v.Int())
	}
	return math.NaN()
}

// groupOf interns the request's group.
func (e *Engine) groupOf(attrs, res pcommon.Map, v *spanView) uint32 {
	b := e.keyBuf[:0]
	dims := e.scratch.dims[:0]
	for _, d := range e.opts.By {
		var s string
		switch d {
		case "model":
			s = v.model
		case "layer":
			s = v.layer
		case "preset":
			s, _, _ = strings.Cut(v.source, ":")
		default:
			if a, ok := attrs.Get(d); ok {
				s = a.AsString()
			} else if a, ok := res.Get(d); ok {
				s = a.AsString()
			}
		}
		dims = append(dims, s)
		b = append(b, s...)
		b = append(b, 0)
	}
	e.keyBuf, e.scratch.dims = b, dims
	if g, ok := e.groupIx[string(b)]; ok {
		return g
	}
	if len(e.groupIx) >= e.opts.MaxGroups-1 {
		return e.overflowGroup()
	}
	g := schema.Group{}
	for i, d := range e.opts.By {
		g[d] = dims[i]
	}
	id := e.addGroup(g)
	e.groupIx[string(b)] = id
	return id
}

// overflowGroup counts a request of a group past MaxGroups; it interns the
// overflow group on first use.
func (e *Engine) overflowGroup() uint32 {
	e.overflowed++
	if e.overflowID == 0 {
		e.overflowID = e.addGroup(schema.Group{schema.OverflowKey: "true"}) + 1
	}
	return e.overflowID - 1
}

func (e *Engine) addGroup(g schema.Group) uint32 {
	id := uint32(len(e.groups))
	e.groups = append(e.groups, g)
	e.gapsDefs = append(e.gapsDefs, newPool(&e.budget))
	e.gapsRest = append(e.gapsRest, newPool(&e.budget))
	return id
}

// llmsloGaps reads into b the request's inter-token gaps as llmslo
// measures them, for its group's pool: the processor's llm.itl.gaps, with
// llm.itl.gap_weights when token-aware ITL weighed them (the processor
// writes them on every request with two outputs or more).
func (b *batch) llmsloGaps(w *row) {
	v := &w.v
	w.gaps = extent{len(b.gaps), len(b.gaps)}
	if !v.hasGaps {
		return
	}
	// A span's gaps weigh at most derive.MaxTokens in all, the processor's
	// own bound on a token count: a hostile weight cannot stretch the loops.
	budget := int64(derive.MaxTokens)
	for i := 0; i < v.gaps.n && budget > 0; i++ {
		wt := int64(1)
		if v.hasWeights && i < v.weights.n {
			wt = max(0, min(v.weights.weight(i), budget))
		}
		budget -= max(wt, 1)
		if g := v.gaps.gap(i); poolable(g, uint32(wt)) {
			b.gaps, b.weights = append(b.gaps, g), append(b.weights, uint32(wt))
			w.weighted = w.weighted || wt != 1
		}
	}
	w.gaps.to = len(b.gaps)
}

// Report computes the report from the records.
func (e *Engine) Report(inputs []string) *Report {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.build(inputs)
}

// constraintNames are the SLO constraints in the order of a record's
// violation bits.
var constraintNames = contract.Constraints[:]
