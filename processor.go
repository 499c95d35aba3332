package llmsloprocessor

import (
	"context"
	"sync"
	"time"

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

	// ownKeys are the fixed attribute keys this processor writes, to clear
	// them on spans that an earlier collector tier already processed.
	ownKeys map[string]bool
	// errorText caches the rendered llm.metrics.error of each combination
	// (a handful occur in practice; the cache stops growing at a bound).
	errorMu   sync.RWMutex
	errorText map[derive.Errors]string
	// state is pooled per-batch working memory.
	state sync.Pool

	// asm joins step spans to request spans; nil unless trace_assembly is
	// enabled, so the default processor keeps no cross-span state.
	asm *assembler
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
	p := &llmSLOProcessor{
		table: derive.NewTable(presets, derive.Options{TokenAwareITL: cfg.TokenAwareITL, MarkerKey: contract.NewKeys(cfg.AttributePrefix).Source}),
		keys:  contract.NewKeys(cfg.AttributePrefix),
		model: cfg.Model,

		errorText: map[derive.Errors]string{},
	}
	k := p.keys
	p.ownKeys = map[string]bool{}
	for _, key := range []string{k.TTFT, k.TPOT, k.E2E, k.ITLMean, k.ITLMax, k.ITLGaps, k.QueueTime, k.OutputTokens, k.InputTokens, k.Model, k.Layer, k.Stream, k.Source, k.Error, k.ServerTTFT, k.ServerQueueTime,
		k.CacheReadInputTokens, k.CacheWriteInputTokens, k.ReasoningOutputTokens} {
		p.ownKeys[key] = true
	}
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

func (p *llmSLOProcessor) shutdown(ctx context.Context) error {
	if p.asm != nil {
		return p.asm.shutdown(ctx)
	}
	return nil
}

// releaseHeld derives and writes a request span the assembly held back.
func (p *llmSLOProcessor) releaseHeld(span ptrace.Span, resource pcommon.Map, scope derive.Scope, steps *derive.Steps, evicted bool) {
	st := p.getState()
	defer p.putState(st)
	if !p.table.DeriveWithSteps(span, scope, steps, &st.res) {
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
func (p *llmSLOProcessor) assemble(span ptrace.Span, rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, scope derive.Scope, st *batchState) bool {
	resource := rs.Resource()
	pr := p.table.PresetAt(st.res.PresetIndex)
	expected := expectedSteps(pr, &st.res)
	if !pr.Steps.FirstTokenFromSteps && st.res.HasOutputTokens && expected <= 0 {
		// A one-token output has no decode steps to wait for.
		p.write(span, resource.Attributes(), st)
		return false
	}
	if steps, ok := p.asm.takeSteps(span.TraceID(), expected); ok {
		p.table.DeriveWithSteps(span, scope, steps, &st.res)
		p.write(span, resource.Attributes(), st)
		return false
	}
	p.asm.hold(span, rs, ss, expected)
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
			scope := derive.ScopeOf(rs, ss)
			spans := ss.Spans()
			st.held = st.held[:0] // indexes of held spans, ascending
			for k := 0; k < spans.Len(); k++ {
				span := spans.At(k)
				if !p.table.DeriveIn(span, scope, &st.res) {
					continue
				}
				recorded = true
				if p.asm != nil && p.table.PresetAt(st.res.PresetIndex).Steps != nil {
					p.join(span, st)
					if p.assemble(span, rs, ss, scope, st) {
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
		p.asm.takeReleased(td, completed)
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
		// An earlier tier processed this span: start from what the producer
		// wrote, so the result is recomputed, never doubled or stale.
		attrs.RemoveIf(func(key string, _ pcommon.Value) bool {
			_, _, slo := k.ParseSLOKey(key)
			return slo || p.ownKeys[key]
		})
	}
	model := res.Model
	if model == "" && p.model.ResourceAttribute != "" {
		if v, ok := resource.Get(p.model.ResourceAttribute); ok && v.Type() == pcommon.ValueTypeStr {
			model = v.Str()
		}
	}
	if model == "" {
		model = p.model.Default
	}

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
