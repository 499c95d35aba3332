package llmsloprocessor

import (
	"context"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"

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

	// trust keeps an earlier tier's keys as they are (trust_upstream).
	trust bool
	// errorText caches the rendered llm.metrics.error of each combination
	// (a handful occur in practice; the cache stops growing at a bound).
	errorMu   sync.RWMutex
	errorText map[derive.Errors]string
	// state is pooled per-batch working memory.
	state sync.Pool

	// asm joins step spans to request spans; nil unless trace_assembly is
	// enabled, so the default processor keeps no cross-span state.
	asm *assembler
	// unregister removes the processor from the in-process registry the
	// connectors read; set by the factory, safe to call more than once.
	unregister func()
}

type compiledSLO struct {
	*slo.SLO
	metKey, violationsKey string
}

type batchState struct {
	res     derive.Result
	verdict slo.Verdict
	counts  *batchCounts
	held    []int
}

func newProcessor(set processor.Settings, cfg *Config, next consumer.Traces) (*llmSLOProcessor, error) {
	presets, err := cfg.presets()
	if err != nil {
		return nil, err
	}
	keys := contract.NewKeys(cfg.AttributePrefix)
	p := &llmSLOProcessor{
		table: derive.NewTable(presets, derive.Options{TokenAwareITL: cfg.TokenAwareITL, OwnedPrefix: keys.Prefix, Owned: keys.Owns}),
		keys:  keys,
		model: cfg.Model,
		trust: cfg.TrustUpstream,

		errorText: map[derive.Errors]string{},
	}
	k := p.keys
	var sloNames []string
	for _, sc := range cfg.SLOs {
		p.slos = append(p.slos, compiledSLO{
			SLO:           slo.New(sc.Name, sc.limits(), sc.Selector.compile()),
			metKey:        k.SLOMet(sc.Name),
			violationsKey: k.SLOViolations(sc.Name),
		})
		sloNames = append(sloNames, sc.Name)
	}
	if p.tel, err = newTelemetry(set.TelemetrySettings.MeterProvider, p.table.Presets(), sloNames); err != nil {
		return nil, err
	}
	if cfg.TraceAssembly.Enabled {
		p.asm = newAssembler(cfg.TraceAssembly, presets, next, set.Logger, p.tel)
		p.asm.release = p.releaseHeld
	}
	return p, nil
}

func (p *llmSLOProcessor) start(context.Context, component.Host) error {
	if p.asm != nil {
		p.asm.start()
	}
	return nil
}

// shutdown is safe to call more than once and without start.
func (p *llmSLOProcessor) shutdown(ctx context.Context) error {
	if p.unregister != nil {
		p.unregister()
	}
	if p.asm != nil {
		return p.asm.shutdown(ctx)
	}
	return nil
}

// releaseHeld derives and writes a request span the assembly held back.
func (p *llmSLOProcessor) releaseHeld(span ptrace.Span, resource pcommon.Map, steps *derive.Steps, evicted bool) {
	st := p.getState()
	defer p.putState(st)
	if !p.table.DeriveWithSteps(span, steps, &st.res) {
		return
	}
	if evicted {
		st.res.Errors.Set(derive.FieldITL, derive.Evicted)
	}
	p.write(span, resource, st)
	p.tel.record(context.Background(), st.counts)
}

// join records an engine span's view for the client span of the same
// trace, and writes that view onto a client span when the engine span came
// first (the usual order: the engine finishes before its client does).
func (p *llmSLOProcessor) join(span ptrace.Span, st *batchState) {
	if st.res.Layer == preset.LayerServer {
		p.asm.noteServer(span.TraceID(), &st.res)
		return
	}
	if v := p.asm.serverViewOf(span.TraceID()); v != nil {
		putSeconds(span.Attributes(), p.keys.ServerTTFT, v.ttft)
		putSeconds(span.Attributes(), p.keys.ServerQueueTime, v.queueTime)
	}
}

// expectedSteps is how many step spans complete a request: one per output
// token after the first when the producer gives a count and its first token
// is not a step (SGLang's decode steps), else unknown (0: any step will do).
func expectedSteps(pr *preset.Preset, res *derive.Result) int64 {
	if pr.Steps.FirstTokenFromSteps || !res.HasOutputTokens {
		return 0
	}
	return res.OutputTokens - 1
}

// assemble handles a request span of a producer with step spans. It
// reports whether the span was held back (removed from its batch).
func (p *llmSLOProcessor) assemble(span ptrace.Span, resource pcommon.Resource, scope pcommon.InstrumentationScope, st *batchState) bool {
	pr := p.table.PresetAt(st.res.PresetIndex)
	expected := expectedSteps(pr, &st.res)
	if !pr.Steps.FirstTokenFromSteps && st.res.HasOutputTokens && expected <= 0 {
		// A one-token output has no decode steps to wait for.
		p.write(span, resource.Attributes(), st)
		return false
	}
	if steps, ok := p.asm.takeSteps(span.TraceID(), expected); ok {
		p.table.DeriveWithSteps(span, steps, &st.res)
		p.write(span, resource.Attributes(), st)
		return false
	}
	if !p.asm.hold(span, resource, scope, expected) {
		// Held state is full: pass the span at once, derived from its own
		// attributes, saying why its step timing is missing.
		st.res.Errors.Set(derive.FieldITL, derive.Overflow)
		p.write(span, resource.Attributes(), st)
		return false
	}
	return true
}

func (sc *SLOConfig) limits() [5]slo.Threshold {
	var l [5]slo.Threshold
	for i, d := range []*time.Duration{sc.TTFT, sc.TPOT, sc.ITL, sc.E2E, sc.QueueTime} {
		if d != nil {
			l[i] = slo.Threshold{Seconds: d.Seconds(), Set: true}
		}
	}
	return l
}

func (s *SelectorConfig) compile() slo.Selector {
	sel := slo.Selector{Layer: s.Layer, Presets: s.Presets, Models: s.Models}
	for _, a := range s.Attributes {
		sel.Attributes = append(sel.Attributes, slo.AttributeMatch{Key: a.Key, Values: a.Values})
	}
	return sel
}

func (p *llmSLOProcessor) getState() *batchState {
	if st, ok := p.state.Get().(*batchState); ok {
		return st
	}
	return &batchState{counts: p.tel.newBatch()}
}

func (p *llmSLOProcessor) processTraces(ctx context.Context, td ptrace.Traces) (ptrace.Traces, error) {
	st := p.getState()
	defer p.putState(st)
	completed := p.asm != nil && p.asm.recordSteps(td)
	recorded, held := false, 0
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		resource := rs.Resource().Attributes()
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			ss := sss.At(j)
			spans := ss.Spans()
			st.held = st.held[:0] // indexes of held spans, ascending
			for k := 0; k < spans.Len(); k++ {
				span := spans.At(k)
				claimed := p.table.Derive(span, &st.res)
				if st.res.Marked {
					if p.trust {
						continue
					}
					if !claimed {
						p.removeOwned(span.Attributes())
					}
				}
				if !claimed {
					continue
				}
				recorded = true
				if p.asm != nil && p.table.PresetAt(st.res.PresetIndex).Steps != nil {
					p.join(span, st)
					if p.assemble(span, rs.Resource(), ss.Scope(), st) {
						st.held = append(st.held, k)
						held++
					}
					continue
				}
				p.write(span, resource, st)
				if p.asm != nil {
					p.join(span, st)
				}
			}
			if len(st.held) > 0 {
				// The assembler keeps its own copy: take the span out of
				// this batch. RemoveIf visits the spans in order.
				k, next := 0, 0
				spans.RemoveIf(func(ptrace.Span) bool {
					remove := next < len(st.held) && st.held[next] == k
					if remove {
						next++
					}
					k++
					return remove
				})
			}
		}
	}
	if recorded {
		p.tel.record(ctx, st.counts)
	}
	if p.asm != nil {
		// A refused send keeps the spans for the next batch or tick.
		_ = p.asm.emit(ctx, p.asm.takeReleased(completed))
	}
	if held > 0 && td.SpanCount() == 0 {
		return td, processorhelper.ErrSkipProcessingData
	}
	return td, nil
}

func (p *llmSLOProcessor) putState(st *batchState) {
	*st.counts = batchCounts{requests: clearRows(st.counts.requests), verdicts: clearRows(st.counts.verdicts)}
	p.state.Put(st)
}

func clearRows[T any](rows []T) []T {
	clear(rows)
	return rows
}

// write puts the derived values and verdicts on the span.
func (p *llmSLOProcessor) write(span ptrace.Span, resource pcommon.Map, st *batchState) {
	res, k, attrs := &st.res, &p.keys, span.Attributes()
	if res.Marked {
		// An earlier tier processed this span, or a client forged keys of
		// the namespace: start from what the producer wrote, so the result
		// is recomputed, never doubled, stale or forged.
		p.removeOwned(attrs)
	}
	model := p.resolveModel(res, resource)

	attrs.EnsureCapacity(attrs.Len() + 13 + 2*len(p.slos))
	putSeconds(attrs, k.TTFT, res.TTFT)
	putSeconds(attrs, k.TPOT, res.TPOT)
	putSeconds(attrs, k.E2E, res.E2E)
	putSeconds(attrs, k.ITLMean, res.ITLMean)
	putSeconds(attrs, k.ITLMax, res.ITLMax)
	putSeconds(attrs, k.QueueTime, res.QueueTime)
	if len(res.Gaps) > 0 {
		gaps := attrs.PutEmptySlice(k.ITLGaps)
		gaps.EnsureCapacity(len(res.Gaps))
		for _, g := range res.Gaps {
			gaps.AppendEmpty().SetDouble(g)
		}
	}
	if len(res.GapWeights) > 0 {
		weights := attrs.PutEmptySlice(k.ITLGapWeights)
		weights.EnsureCapacity(len(res.GapWeights))
		for _, w := range res.GapWeights {
			weights.AppendEmpty().SetInt(w)
		}
	}
	if res.HasOutputTokens {
		attrs.PutInt(k.OutputTokens, res.OutputTokens)
	}
	if res.HasInputTokens {
		attrs.PutInt(k.InputTokens, res.InputTokens)
	}
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
		for f := range res.Errors {
			if r := res.Errors[f]; r != derive.NoReason {
				st.counts.errors[f][r]++
			}
		}
	}
	st.counts.requests[res.PresetIndex][res.Origin]++

	for i := range p.slos {
		s := &p.slos[i]
		if !s.Selector.Selects(res, model, attrs, resource) {
			continue
		}
		v := &st.verdict
		s.Judge(res, v)
		switch {
		case !v.Decided:
			st.counts.verdicts[i][outcomeUnknown]++
		case v.Met:
			attrs.PutBool(s.metKey, true)
			st.counts.verdicts[i][outcomeMet]++
		default:
			attrs.PutBool(s.metKey, false)
			st.counts.verdicts[i][outcomeViolated]++
		}
		if len(v.Violations) > 0 {
			list := attrs.PutEmptySlice(s.violationsKey)
			list.EnsureCapacity(len(v.Violations))
			for _, name := range v.Violations {
				list.AppendEmpty().SetStr(name)
			}
		}
	}
}

// removeOwned removes every key of the processor's namespace from attrs.
func (p *llmSLOProcessor) removeOwned(attrs pcommon.Map) {
	attrs.RemoveIf(func(key string, _ pcommon.Value) bool { return p.keys.Owns(key) })
}

// resolveModel returns the model name: the span's, else the resource
// attribute, else the default. Invalid UTF-8 is repaired (and reported as
// model:invalid_utf8) before it can become a metric label.
func (p *llmSLOProcessor) resolveModel(res *derive.Result, resource pcommon.Map) string {
	model := res.Model
	if model == "" && p.model.ResourceAttribute != "" {
		if v, ok := resource.Get(p.model.ResourceAttribute); ok && v.Type() == pcommon.ValueTypeStr {
			model = v.Str()
		}
	}
	if model == "" {
		model = p.model.Default
	}
	if !utf8.ValidString(model) {
		model = strings.ToValidUTF8(model, "\uFFFD")
		res.Errors.Set(derive.FieldModel, derive.InvalidUTF8)
	}
	return model
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
