// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloprocessor

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmslo/llmslo/internal/assembly"
	"github.com/llmslo/llmslo/internal/derive"
	"github.com/llmslo/llmslo/internal/preset"
)

// One call, one count. An instrumentation that wraps an SDK with tracing
// of its own gives two client LLM spans of one call, the wrapper the direct
// parent of the SDK's (OpenInference's "Anthropic Messages" around the
// Anthropic SDK's anthropic.messages.create), and no scope level tells
// them apart. Such a pair is found in the batch, whatever the producers:
// a claimed client span whose parent span is a claimed client span of the
// same model and operation, the child within the parent's time. The call
// is judged once, on the span with the evidence (a TTFT, else a decided
// stream flag; the inner span when they are equal); the other carries
// only llm.metrics.error (span:wraps_judged or span:inside_judged), so no
// connector counts it. A span wrapping two or more such calls (a
// framework's retries) wraps requests of its own: each is judged, the
// wrapper is not. The work is linear in the batch: one set of parent IDs,
// one map of the held spans by ID, one walk down each chain. With trace
// assembly on, a request span the assembly holds back for its steps is
// written later, alone: it is not paired.

// wrappers is a batch's pairing state, pooled with the batch state.
type wrappers struct {
	// parents holds the ID of every span of the batch that is the parent
	// of another span of the batch.
	parents map[pcommon.SpanID]struct{}
	// held are the claimed client spans that may be one of a pair,
	// written once the batch is read; byID indexes them.
	held  []heldSpan
	n     int
	byID  map[pcommon.SpanID]int
	chain []int
}

// heldSpan is a claimed client span held until the batch's end.
type heldSpan struct {
	span     ptrace.Span
	resource pcommon.Map
	res      derive.Result
	// parent is the index of its wrapper's held span, -1 for none; child
	// the index of its last matching child; children how many match.
	parent, child, children int
	// engine is the engine's view the trace assembly joined to the span.
	engine *assembly.ServerView
	// reason is derive.WrapsJudged or InsideJudged for a span not judged.
	reason  derive.Reason
	visited bool
}

// maxRetainedHeld bounds the held spans a pooled batch state keeps room
// for after a large batch, and maxRetainedHeldGaps the gaps each keeps
// room for.
const (
	maxRetainedHeld     = 1024
	maxRetainedHeldGaps = 256
)

// begin indexes the spans of the batch that are the parent of another:
// the parent IDs first, then only those a span of the batch carries. A
// batch where no span has a parent costs one read per span.
func (w *wrappers) begin(td ptrace.Traces) {
	if w.parents == nil {
		w.parents, w.byID = map[pcommon.SpanID]struct{}{}, map[pcommon.SpanID]int{}
	}
	// The loop written out, not forEachSpan: it reads every span of every
	// batch, and a closure call per span was most of its cost.
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				if id := spans.At(k).ParentSpanID(); !id.IsEmpty() {
					w.parents[id] = struct{}{}
				}
			}
		}
	}
	if len(w.parents) == 0 {
		return
	}
	// byID, empty until resolve, marks the parent IDs seen as spans.
	forEachSpan(td, func(s ptrace.Span) {
		if _, ok := w.parents[s.SpanID()]; ok {
			w.byID[s.SpanID()] = 0
		}
	})
	clear(w.parents)
	for id := range w.byID {
		w.parents[id] = struct{}{}
	}
	clear(w.byID)
}

// forEachSpan calls fn for every span of td.
func forEachSpan(td ptrace.Traces, fn func(ptrace.Span)) {
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, s := range ss.Spans().All() {
				fn(s)
			}
		}
	}
}

// holds reports whether a claimed span may be one of a pair: a client span
// whose parent is in the batch, or that is the parent of one.
func (w *wrappers) holds(span ptrace.Span, res *derive.Result) bool {
	if len(w.parents) == 0 || res.Layer != preset.LayerClient {
		return false
	}
	if _, parentHere := w.parents[span.ParentSpanID()]; parentHere {
		return true
	}
	_, isParent := w.parents[span.SpanID()]
	return isParent
}

// hold keeps a copy of the span's result until the batch's end.
func (w *wrappers) hold(span ptrace.Span, resource pcommon.Map, res *derive.Result) *heldSpan {
	if w.n == len(w.held) {
		w.held = append(w.held, heldSpan{})
	}
	h := &w.held[w.n]
	w.n++
	h.span, h.resource = span, resource
	h.res.CopyFrom(res)
	h.parent, h.child, h.children, h.reason, h.visited, h.engine = -1, -1, 0, derive.NoReason, false, nil
	return h
}

// reset forgets the batch, keeping a bounded amount of memory.
func (w *wrappers) reset() {
	clear(w.parents)
	clear(w.byID)
	for i := range w.held[:w.n] {
		h := &w.held[i]
		h.span, h.resource, h.engine = ptrace.Span{}, pcommon.Map{}, nil
		if cap(h.res.Gaps) > maxRetainedHeldGaps {
			h.res.Gaps = nil
		}
		if cap(h.res.GapWeights) > maxRetainedHeldGaps {
			h.res.GapWeights = nil
		}
	}
	if len(w.held) > maxRetainedHeld {
		w.held = nil
	}
	w.n = 0
}

// resolve pairs the held spans and marks each one not judged.
func (w *wrappers) resolve() {
	h := w.held[:w.n]
	for i := range h {
		w.byID[h[i].span.SpanID()] = i
	}
	for i := range h {
		pid := h[i].span.ParentSpanID()
		if pid.IsEmpty() {
			continue
		}
		if j, ok := w.byID[pid]; ok && j != i && sameCall(&h[j], &h[i]) {
			h[i].parent, h[j].child = j, i
			h[j].children++
		}
	}
	for i := range h {
		head := h[i].parent < 0 || h[h[i].parent].children > 1
		if head && h[i].children == 1 {
			w.judgeChain(i)
		} else if h[i].children > 1 {
			h[i].reason = derive.WrapsJudged
		}
	}
}

// judgeChain judges one span of the chain of single wrappers from head
// down: the best evidence, the innermost of equals. A chain ending in a
// span that wraps several calls wraps them all.
func (w *wrappers) judgeChain(head int) {
	h := w.held[:w.n]
	w.chain = w.chain[:0]
	for i := head; i >= 0 && !h[i].visited; {
		h[i].visited = true
		w.chain = append(w.chain, i)
		if h[i].children != 1 {
			break
		}
		i = h[i].child
	}
	if last := w.chain[len(w.chain)-1]; h[last].children > 1 {
		for _, i := range w.chain {
			h[i].reason = derive.WrapsJudged
		}
		return
	}
	best := 0
	for k, i := range w.chain {
		if evidence(&h[i].res) >= evidence(&h[w.chain[best]].res) {
			best = k
		}
	}
	for k, i := range w.chain {
		switch {
		case k < best:
			h[i].reason = derive.WrapsJudged
		case k > best:
			h[i].reason = derive.InsideJudged
		}
	}
}

// evidence ranks what a span can decide of its call: a TTFT, else a
// decided stream flag (a TTFT that does not apply), else neither.
func evidence(res *derive.Result) int {
	switch res.TTFT.S {
	case derive.Known:
		return 2
	case derive.NotApplicable:
		return 1
	}
	return 0
}

// sameCall reports whether child is a span of the same call as its parent:
// the same model, no different operation, within the parent's time.
func sameCall(parent, child *heldSpan) bool {
	if parent.res.Model != child.res.Model {
		return false
	}
	if po, co := operation(parent.span), operation(child.span); po != "" && co != "" && po != co {
		return false
	}
	ps, pe := parent.span.StartTimestamp(), parent.span.EndTimestamp()
	cs, ce := child.span.StartTimestamp(), child.span.EndTimestamp()
	return ps != 0 && ps <= cs && cs <= ce && ce <= pe
}

// operation is the span's gen_ai.operation.name, "" when it states none.
func operation(span ptrace.Span) string {
	if v, ok := span.Attributes().Get(preset.OperationNameKey); ok && v.Type() == pcommon.ValueTypeStr {
		return v.Str()
	}
	return ""
}

// writeHeld writes the held spans once the batch is read: the judged
// ones as any span, the others with their reason only.
func (p *llmSLOProcessor) writeHeld(st *batchState) {
	w := &st.wraps
	if w.n == 0 {
		return
	}
	w.resolve()
	for i := range w.held[:w.n] {
		h := &w.held[i]
		if h.reason != derive.NoReason {
			p.writeNotJudged(h.span.Attributes(), &h.res, h.reason, st)
			continue
		}
		st.res, st.engine = &h.res, h.engine
		p.write(h.span, h.resource, st)
		if h.engine != nil {
			p.writeServerView(h.span, h.engine)
		}
	}
	st.res, st.engine = &st.own, nil
}

// writeNotJudged leaves on a span of a call judged on another span only
// the reason: no value, no verdict, so the call is counted once.
func (p *llmSLOProcessor) writeNotJudged(attrs pcommon.Map, res *derive.Result, reason derive.Reason, st *batchState) {
	if res.Marked {
		p.removeOwned(attrs)
	}
	var e derive.Errors
	e.Set(derive.FieldSpan, reason)
	attrs.PutStr(p.keys.Error, p.errorString(&e))
	st.counts.countNotJudged(reason)
}
