// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloprocessor

import (
	"context"
	"strings"
	"sync"
	"unicode/utf8"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"

	"github.com/llmslo/llmslo/internal/assembly"
	"github.com/llmslo/llmslo/internal/contract"
	"github.com/llmslo/llmslo/internal/derive"
	"github.com/llmslo/llmslo/internal/preset"
	"github.com/llmslo/llmslo/internal/slo"
)

// llmSLOProcessor holds only configuration-derived, read-only state: it keeps
// nothing across spans, so collectors running it scale out behind any load
// balancer.
type llmSLOProcessor struct {
	table *derive.Table
	keys  contract.Keys
	slos  []compiledSLO
	model ModelConfig
	tel   *telemetry
	// watch logs the SLOs that cannot work as configured.
	watch *watch

	// trust keeps an earlier tier's keys as they are (trust_upstream).
	trust bool
	// parts writes the parts of TTFT and E2E (Config.writesParts).
	parts bool
	// errorText caches the rendered llm.metrics.error of each combination
	// (a handful occur in practice; the cache stops growing at a bound).
	errorMu   sync.RWMutex
	errorText map[derive.Errors]string
	// state is pooled per-batch working memory.
	state sync.Pool

	// asm joins step spans to request spans; nil unless trace_assembly is
	// enabled, so the default processor keeps no cross-span state.
	asm *assembly.Assembler
	// unregister removes the processor from the in-process registry the
	// connectors read; set by the factory, safe to call more than once.
	unregister func()
}

type batchState struct {
	// res is the result of the span being written: one of run's, or own
	// for the spans that go one by one (trace assembly).
	res     *derive.Result
	own     derive.Result
	run     []derivedSpan
	verdict slo.Verdict
	// pre holds, per SLO, the verdict verdictRoom judged (SLOs that read
	// nothing from the span only), for writeVerdicts to write.
	pre    []preVerdict
	limits slo.Limits // a request's own, for SLOs with per-request thresholds
	// engine is the engine's view joined to the client span being written
	// (trace assembly), nil otherwise; parts, what the request's TTFT is
	// made of, built once per span when an SLO failed (partsReady).
	engine     *assembly.ServerView
	parts      slo.Parts
	partsReady bool
	counts     *batchCounts
	held       []int
	// packed is the buffer putGaps encodes a span's gaps in.
	packed      []byte
	validModels validModels
	// batch is the batch's business with the trace assembly.
	batch *assembly.Batch
	// wraps holds the spans that may be two of one call (wrappers.go).
	wraps wrappers
}

// phaseSpans is how many spans processSpans derives before it writes them.
// Per span, the code of the whole path (scan, presets, events, formulas,
// verdicts, pdata's writes) is larger than a core's 32 KiB instruction
// cache: run span by span, a 16-event span missed it ~350 times, and took
// ~1.5x the time its instruction count predicts. Derive a run, then write
// it, and each half stays in the cache (~30 misses a span); 32 results
// stay in the data cache beside it.
const phaseSpans = 32

// derivedSpan is one span of a run: its result, and whether a preset
// claimed it.
type derivedSpan struct {
	res     derive.Result
	claimed bool
}

func newProcessor(set processor.Settings, cfg *Config, next consumer.Traces) (*llmSLOProcessor, error) {
	presets, err := cfg.presets()
	if err != nil {
		return nil, err
	}
	keys := contract.NewKeys(cfg.AttributePrefix)
	p := &llmSLOProcessor{
		keys:  keys,
		model: cfg.Model,
		trust: cfg.TrustUpstream,
		slos:  cfg.compileSLOs(keys),
		parts: cfg.writesParts(),

		errorText: map[derive.Errors]string{},
	}
	if p.tel, err = newTelemetry(set.MeterProvider, presetNames(presets), cfg.sloNames()); err != nil {
		return nil, err
	}
	p.watch = newWatch(set.Logger, cfg, presetNames(presets))
	opts := derive.Options{TokenAwareITL: cfg.TokenAwareITL, OwnedPrefix: keys.Prefix, Owned: keys.Owns,
		SkipParts: !p.parts && !cfg.readsParts()}
	if cfg.TraceAssembly.Enabled {
		p.asm = assembly.New(cfg.TraceAssembly.bounds(), presets,
			assembly.Deps{Next: next, Logger: set.Logger, Telemetry: p.tel, Release: p.releaseHeld})
		opts.Steps = p.asm
	}
	p.table = derive.NewTable(presets, opts)
	return p, nil
}

func presetNames(presets []*preset.Preset) []string {
	names := make([]string, 0, len(presets))
	for _, pr := range presets {
		names = append(names, pr.Name)
	}
	return names
}

func (p *llmSLOProcessor) start(context.Context, component.Host) error {
	if p.asm != nil {
		p.asm.Start()
	}
	return nil
}

// shutdown is safe to call more than once and without start.
func (p *llmSLOProcessor) shutdown(ctx context.Context) error {
	if p.unregister != nil {
		p.unregister()
	}
	if p.asm != nil {
		return p.asm.Shutdown(ctx)
	}
	return nil
}

// releaseHeld derives and writes a request span the assembly held back:
// from its steps when they are complete, else from its own attributes
// alone, marked assembly:incomplete with the steps seen and expected.
func (p *llmSLOProcessor) releaseHeld(span ptrace.Span, resource pcommon.Map, scope derive.Scope, steps *derive.Steps, pr assembly.Progress) {
	st := p.getState()
	defer p.putState(st)
	derived := false
	if pr.Complete {
		derived = p.table.DeriveWithSteps(span, scope, steps, st.res)
	} else {
		derived = p.table.DeriveOwn(span, scope, st.res)
		st.res.Errors.Set(derive.FieldAssembly, derive.Incomplete)
		if pr.Evicted {
			st.res.Errors.Set(derive.FieldITL, derive.Evicted)
		}
	}
	if !derived {
		return
	}
	p.write(span, resource, st)
	if !pr.Complete {
		attrs := span.Attributes()
		attrs.PutInt(p.keys.AssemblyStepsSeen, pr.Seen)
		if pr.Expected > 0 {
			attrs.PutInt(p.keys.AssemblyStepsExpected, pr.Expected)
		}
	}
	p.tel.record(context.Background(), st.counts)
	p.watch.merge(st.counts)
}

// writeServerView joins the engine's view of the request (Decision.Server)
// onto a client span written already: what the engine saw of the same
// request, beside the client's own values, which it never replaces.
func (p *llmSLOProcessor) writeServerView(span ptrace.Span, v *assembly.ServerView) {
	putSeconds(span.Attributes(), p.keys.ServerTTFT, v.TTFT)
	putSeconds(span.Attributes(), p.keys.ServerQueueTime, v.QueueTime)
}

func (p *llmSLOProcessor) getState() *batchState {
	if st, ok := p.state.Get().(*batchState); ok {
		return st
	}
	st := &batchState{counts: p.tel.newBatch(), pre: make([]preVerdict, len(p.slos))}
	st.res, st.run = &st.own, make([]derivedSpan, phaseSpans)
	return st
}

func (p *llmSLOProcessor) processTraces(ctx context.Context, td ptrace.Traces) (ptrace.Traces, error) {
	st := p.getState()
	defer p.putState(st)
	if p.asm != nil {
		st.batch = p.asm.Begin(td)
	}
	recorded := false
	st.wraps.begin(td)
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			ss := sss.At(j)
			scope := derive.ScopeOf(rs, ss)
			spans := ss.Spans()
			st.held = st.held[:0] // indexes of held spans, ascending
			if p.asm == nil {
				recorded = p.processSpans(spans, rs, scope, st) || recorded
				continue
			}
			for k := 0; k < spans.Len(); k++ {
				claimed, h := p.processAssembled(spans.At(k), rs, ss, scope, st)
				recorded = recorded || claimed
				if h {
					st.held = append(st.held, k)
				}
			}
			removeAt(spans, st.held)
		}
	}
	p.writeHeld(st)
	if recorded {
		p.tel.record(ctx, st.counts)
		p.watch.merge(st.counts)
	}
	if p.asm != nil && p.asm.End(ctx, st.batch, td) {
		// Every span was held: nothing goes on, the batch is acknowledged
		// as it stands.
		return td, processorhelper.ErrSkipProcessingData
	}
	return td, nil
}

// processSpans derives and writes the spans of one ScopeSpans of rs, a run
// of phaseSpans at a time: first every span of the run is derived, then
// every claimed one is written. It reports whether a preset claimed a span.
func (p *llmSLOProcessor) processSpans(spans ptrace.SpanSlice, rs ptrace.ResourceSpans, scope derive.Scope, st *batchState) (recorded bool) {
	resource := rs.Resource().Attributes()
	for from := 0; from < spans.Len(); from += phaseSpans {
		run := st.run[:min(phaseSpans, spans.Len()-from)]
		for i := range run {
			run[i].claimed = p.table.DeriveIn(spans.At(from+i), scope, &run[i].res)
		}
		for i := range run {
			span := spans.At(from + i)
			if p.admit(span, run[i].claimed, &run[i].res) {
				recorded = true
				if st.wraps.holds(span, &run[i].res) {
					st.wraps.hold(span, resource, &run[i].res)
				} else {
					st.res = &run[i].res
					p.write(span, resource, st)
				}
			}
			run[i].res.Release()
		}
		st.res = &st.own
	}
	return recorded
}

// admit says whether a derived span is written. A span already carrying
// the processor's keys keeps them as they are with trust_upstream; without
// it, a span no preset claims loses them (a claimed one is rewritten).
func (p *llmSLOProcessor) admit(span ptrace.Span, claimed bool, res *derive.Result) bool {
	if res.Marked {
		if p.trust {
			return false
		}
		if !claimed {
			p.removeOwned(span.Attributes())
		}
	}
	return claimed
}

// processAssembled derives and writes one span of rs and ss with trace
// assembly on: the assembly decides first whether it holds the span back or
// has an engine's view to join onto it. Spans go one by one, in order, as
// the derivation of the next may read the steps the assembly took from
// this one. It reports whether a preset claimed the span and whether the
// assembly held it (it keeps its own copy; the caller removes the span).
func (p *llmSLOProcessor) processAssembled(span ptrace.Span, rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, scope derive.Scope, st *batchState) (claimed, held bool) {
	if !p.admit(span, p.table.DeriveIn(span, scope, st.res), st.res) {
		return false, false
	}
	d := p.asm.Span(st.batch, assembly.Request{Span: span, Resource: rs, Scope: ss, Result: st.res,
		Preset: p.table.PresetAt(st.res.PresetIndex)})
	if d.Held {
		return true, true
	}
	if d.Server != nil {
		// Joined before the span is written, so that its SLOs can put a
		// TTFT miss on the network (derive.NetworkTime).
		st.res.JoinEngine(d.Server.TTFT)
	}
	if st.wraps.holds(span, st.res) {
		st.wraps.hold(span, rs.Resource().Attributes(), st.res).engine = d.Server
		return true, false
	}
	st.engine = d.Server
	p.write(span, rs.Resource().Attributes(), st)
	if d.Server != nil {
		p.writeServerView(span, d.Server)
	}
	st.engine = nil
	return true, false
}

// removeAt removes the spans at the ascending indexes idx. RemoveIf visits
// the spans in order.
func removeAt(spans ptrace.SpanSlice, idx []int) {
	if len(idx) == 0 {
		return
	}
	k, next := 0, 0
	spans.RemoveIf(func(ptrace.Span) bool {
		remove := next < len(idx) && idx[next] == k
		if remove {
			next++
		}
		k++
		return remove
	})
}

func (p *llmSLOProcessor) putState(st *batchState) {
	st.batch, st.engine = nil, nil
	st.wraps.reset()
	st.counts.reset()
	p.state.Put(st)
}

// write puts the derived values and verdicts on the span, and counts them.
func (p *llmSLOProcessor) write(span ptrace.Span, resource pcommon.Map, st *batchState) {
	res, attrs := st.res, span.Attributes()
	if res.Marked {
		// An earlier tier processed this span, or a client forged keys of
		// the namespace: start from what the producer wrote, so the result
		// is recomputed, never doubled, stale or forged.
		p.removeOwned(attrs)
	}
	model := p.resolveModel(res, resource, st)
	st.partsReady = false
	attrs.EnsureCapacity(attrs.Len() + valueCount(res, model, p.parts) + p.verdictRoom(attrs, resource, model, st))
	p.writeValues(attrs, model, st)
	p.writeVerdicts(attrs, resource, model, st)
	st.counts.countRequest(res)
}

// writeValues writes the derived values, one key each (docs/processor.md,
// "Attributes written"); a value that is not known is left out.
func (p *llmSLOProcessor) writeValues(attrs pcommon.Map, model string, st *batchState) {
	k, res := &p.keys, st.res
	putSeconds(attrs, k.TTFT, res.TTFT)
	putSeconds(attrs, k.TPOT, res.TPOT)
	putSeconds(attrs, k.E2E, res.E2E)
	putSeconds(attrs, k.ITLMean, res.ITLMean)
	putSeconds(attrs, k.ITLMax, res.ITLMax)
	putSeconds(attrs, k.QueueTime, res.QueueTime)
	if p.parts {
		putSeconds(attrs, k.PrefillTime, res.PrefillTime)
		putSeconds(attrs, k.KVTransferTime, res.KVTransferTime)
		putSeconds(attrs, k.DecodeTime, res.DecodeTime)
		putSeconds(attrs, k.NetworkTime, res.NetworkTime)
	}
	st.packed = putGaps(attrs, k, res, st.packed)
	if res.HasOutputTokens {
		attrs.PutInt(k.OutputTokens, res.OutputTokens)
	}
	if res.HasInputTokens {
		attrs.PutInt(k.InputTokens, res.InputTokens)
	}
	putTokenDetails(attrs, k, res)
	if model != "" {
		attrs.PutStr(k.Model, model)
	}
	attrs.PutStr(k.Layer, res.Layer)
	if res.Stream != derive.Unknown {
		attrs.PutBool(k.Stream, res.Stream == derive.True)
	}
	attrs.PutStr(k.Source, p.table.Source(res))
	if !res.Errors.Empty() {
		attrs.PutStr(k.Error, p.errorString(&res.Errors))
	}
}

// putTokenDetails writes the cache and reasoning token counts the producer
// gave, under the contract's keys.
func putTokenDetails(attrs pcommon.Map, k *contract.Keys, res *derive.Result) {
	if res.HasCacheReadInputTokens {
		attrs.PutInt(k.CacheReadInputTokens, res.CacheReadInputTokens)
	}
	if res.HasCacheWriteInputTokens {
		attrs.PutInt(k.CacheWriteInputTokens, res.CacheWriteInputTokens)
	}
	if res.HasReasoningOutputTokens {
		attrs.PutInt(k.ReasoningOutputTokens, res.ReasoningOutputTokens)
	}
}

// valueCount is the number of keys writeValues writes for res, the room a
// span's attributes need beyond the verdicts: reserving exactly that grows
// the attribute array once and no further (TestValueCount keeps the two in
// step).
func valueCount(res *derive.Result, model string, parts bool) int {
	// Field by field, not over arrays of the values: this runs on every
	// span, and copying the values into arrays cost more than counting.
	n := 2 + // layer, source
		known(&res.TTFT) + known(&res.TPOT) + known(&res.E2E) +
		known(&res.ITLMean) + known(&res.ITLMax) + known(&res.QueueTime)
	if parts {
		n += known(&res.PrefillTime) + known(&res.KVTransferTime) + known(&res.DecodeTime) + known(&res.NetworkTime)
	}
	n += boolCount(len(res.Gaps) > 0) + boolCount(len(res.GapWeights) > 0) + boolCount(res.HasOutputTokens) + boolCount(res.HasInputTokens) +
		boolCount(res.HasCacheReadInputTokens) + boolCount(res.HasCacheWriteInputTokens) + boolCount(res.HasReasoningOutputTokens) +
		boolCount(model != "") + boolCount(res.Stream != derive.Unknown) + boolCount(!res.Errors.Empty())
	return n
}

// known is 1 for a value that is known, 0 otherwise.
func known(v *derive.Value) int { return boolCount(v.S == derive.Known) }

// preVerdict is an SLO's verdict judged before the values are written.
type preVerdict struct {
	selected bool
	v        slo.Verdict
}

// verdictRoom is the number of keys writeVerdicts writes, or a bound on it:
// reserving exactly keeps the attribute array in the smallest size class
// that holds it (a slack of one key can cost a class, 64 bytes a span). An
// SLO that reads nothing from the span's attributes (pure) is judged here,
// once, into st.pre; one that reads them (its selector or per-request
// thresholds) may see the values written first, so it is judged in
// writeVerdicts and gets the bound, three keys (met, violations, causes).
func (p *llmSLOProcessor) verdictRoom(attrs, resource pcommon.Map, model string, st *batchState) int {
	n := 0
	for i := range p.slos {
		s, pre := &p.slos[i], &st.pre[i]
		if !s.pure {
			n += 3
			continue
		}
		if pre.selected = s.Selector.Selects(st.res, model, attrs, resource); pre.selected {
			s.Judge(st.res, &pre.v)
			p.attribute(&s.Limits, &pre.v, st)
			n += boolCount(pre.v.Decided) + boolCount(len(pre.v.Violations) > 0) + boolCount(len(pre.v.Causes) > 0)
		}
	}
	return n
}

func boolCount(b bool) int {
	if b {
		return 1
	}
	return 0
}

// putGaps writes every gap and, when some weight is not 1, the weights,
// each packed into one bytes attribute (contract.AppendGaps): one
// allocation per list where a slice costs one per gap. scratch is the
// batch's encoding buffer, returned grown for the next span.
func putGaps(attrs pcommon.Map, k *contract.Keys, res *derive.Result, scratch []byte) []byte {
	if len(res.Gaps) > 0 {
		scratch = contract.AppendGaps(scratch[:0], res.Gaps)
		attrs.PutEmptyBytes(k.ITLGaps).FromRaw(scratch)
	}
	if len(res.GapWeights) > 0 {
		scratch = contract.AppendGapWeights(scratch[:0], res.GapWeights)
		attrs.PutEmptyBytes(k.ITLGapWeights).FromRaw(scratch)
	}
	return scratch
}

// writeVerdicts writes the verdict of every SLO that selects the request:
// met (absent when unknown) and the violations. It runs after verdictRoom,
// which judged the pure SLOs already; the others are judged here.
func (p *llmSLOProcessor) writeVerdicts(attrs, resource pcommon.Map, model string, st *batchState) {
	res := st.res
	for i := range p.slos {
		s, v := &p.slos[i], &st.verdict
		switch {
		case s.pure && !st.pre[i].selected, !s.pure && !s.Selector.Selects(res, model, attrs, resource):
			continue
		case s.pure:
			v = &st.pre[i].v
		default:
			p.judge(s, attrs, st)
		}
		st.counts.countVerdict(i, res, v)
		if v.Decided {
			attrs.PutBool(s.metKey, v.Met)
		}
		putStrings(attrs, s.violationsKey, v.Violations)
		putStrings(attrs, s.causesKey, v.Causes)
	}
}

// putStrings writes a non-empty list as a string slice attribute.
func putStrings(attrs pcommon.Map, key string, list []string) {
	if len(list) == 0 {
		return
	}
	out := attrs.PutEmptySlice(key)
	out.EnsureCapacity(len(list))
	for _, s := range list {
		out.AppendEmpty().SetStr(s)
	}
}

// attribute names the cause of each constraint v failed (slo.Attribute),
// judged against l. A verdict with none costs one test: the parts are
// built only for a failed one, once per span.
func (p *llmSLOProcessor) attribute(l *slo.Limits, v *slo.Verdict, st *batchState) {
	if v.Violated == 0 {
		return
	}
	if !st.partsReady {
		st.parts, st.partsReady = slo.PartsOf(st.res), true
		if e := st.engine; e != nil {
			// A client span's TTFT holds its engine's: the engine's parts
			// are its parts, beside the network time.
			st.parts.Queue, st.parts.Prefill, st.parts.KVTransfer = e.QueueTime, e.Prefill, e.KVTransfer
		}
	}
	slo.Attribute(st.res, &st.parts, l, v)
}

// judge judges s on the request into st.verdict: against the configured
// thresholds, or, when s reads per-request ones, against the request's. A
// malformed or too loose per-request threshold is reported in
// llm.metrics.error (written again, as writeValues wrote it before the
// verdicts).
func (p *llmSLOProcessor) judge(s *compiledSLO, attrs pcommon.Map, st *batchState) {
	res := st.res
	if s.From == nil {
		s.Judge(res, &st.verdict)
		p.attribute(&s.Limits, &st.verdict, st)
		return
	}
	if r := s.LimitsFor(attrs, &st.limits); r != derive.NoReason && res.Errors[derive.FieldSLOThreshold] == derive.NoReason {
		res.Errors.Set(derive.FieldSLOThreshold, r)
		attrs.PutStr(p.keys.Error, p.errorString(&res.Errors))
	}
	s.JudgeLimits(res, &st.limits, &st.verdict)
	p.attribute(&st.limits, &st.verdict, st)
}

// removeOwned removes every key of the processor's namespace from attrs.
func (p *llmSLOProcessor) removeOwned(attrs pcommon.Map) {
	attrs.RemoveIf(func(key string, _ pcommon.Value) bool { return p.keys.Owns(key) })
}

// resolveModel returns the model name: the span's, else the resource
// attribute, else the default. Invalid UTF-8 is repaired (and reported as
// model:invalid_utf8) before it can become a metric label.
func (p *llmSLOProcessor) resolveModel(res *derive.Result, resource pcommon.Map, st *batchState) string {
	model := res.Model
	if model == "" && p.model.ResourceAttribute != "" {
		if v, ok := resource.Get(p.model.ResourceAttribute); ok && v.Type() == pcommon.ValueTypeStr {
			model = v.Str()
		}
	}
	if model == "" {
		model = p.model.Default
	}
	if st.validModels.has(model) {
		return model
	}
	if !utf8.ValidString(model) {
		model = strings.ToValidUTF8(model, "\uFFFD")
		res.Errors.Set(derive.FieldModel, derive.InvalidUTF8)
	} else {
		st.validModels.add(model)
	}
	return model
}

// validModels keeps copies of the last few model names found valid UTF-8:
// the spans of a batch mostly share a handful, and a repeat is then a
// comparison or two instead of a validation.
type validModels struct {
	names [4][]byte
	next  int
}

// maxValidModel bounds the names validModels keeps a copy of.
const maxValidModel = 256

func (m *validModels) has(model string) bool {
	for i := range m.names {
		if m.names[i] != nil && string(m.names[i]) == model {
			return true
		}
	}
	return false
}

func (m *validModels) add(model string) {
	if len(model) > maxValidModel {
		return
	}
	m.names[m.next] = append(m.names[m.next][:0], model...)
	m.next = (m.next + 1) % len(m.names)
}

func putSeconds(attrs pcommon.Map, key string, v derive.Value) {
	if v.S == derive.Known {
		attrs.PutDouble(key, v.V)
	}
}

const maxCachedErrorTexts = 1024

func (p *llmSLOProcessor) errorString(e *derive.Errors) string {
	p.errorMu.RLock()
	s, ok := p.errorText[*e]
	p.errorMu.RUnlock()
	if ok {
		return s
	}
	s = e.String()
	p.errorMu.Lock()
	if len(p.errorText) < maxCachedErrorTexts {
		p.errorText[*e] = s
	}
	p.errorMu.Unlock()
	return s
}
