// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package derive

import (
	"math/bits"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmslo/llmslo/internal/preset"
)

// scratch is the per-call working memory, pooled so that the hot path does
// not allocate.
type scratch struct {
	has  []bool
	vals []pcommon.Value
	// set lists the slots scan filled, each once, so that putScratch clears
	// only those (clearing every slot's Value cost more than the scan).
	set []int
	// eventSeen: per event slot, an event of that name is among the span's
	// first scanned events. The scan is lazy (most spans are claimed
	// or refused without an event condition) and resumable (see hasEvent).
	eventSeen []bool
	scanned   int
	out       outputEvents
	// owned: the span carries a key of the processor's namespace.
	owned bool
	// cand: the presets an attribute found by the scan may let match.
	cand uint64
	// seen[i] is the indexed key last found at attribute position i ("" for
	// none: slotOf is never asked about an empty key), kept from span to
	// span; it holds the table's strings, never the span's.
	seen [seenKeys]keyEntry
	// fields: the claiming preset's fields with an attribute on the span
	// (compiled.fieldsPresent); timingValue and countValue read no other.
	fields uint32
}

// seenKeys is how many attribute positions slotOf remembers.
const seenKeys = 32

func (t *Table) getScratch() *scratch {
	s, _ := t.pool.Get().(*scratch)
	if s == nil || len(s.has) != t.numAttrs {
		s = &scratch{has: make([]bool, t.numAttrs), vals: make([]pcommon.Value, t.numAttrs), set: make([]int, 0, t.numAttrs), eventSeen: make([]bool, t.numEvents)}
	}
	return s
}

func (t *Table) putScratch(s *scratch) {
	clearScratch(s)
	t.pool.Put(s)
}

// clearScratch undoes what a span's derivation put in s, all but seen,
// which is kept for the next span.
func clearScratch(s *scratch) {
	for _, slot := range s.set {
		s.has[slot] = false
		s.vals[slot] = pcommon.Value{}
	}
	s.set = s.set[:0]
	if s.scanned > 0 {
		clear(s.eventSeen)
		s.scanned = 0
	}
	s.out.reset()
	s.owned, s.cand, s.fields = false, 0, 0
}

// scan reads the span's attributes into s, in one pass.
func (t *Table) scan(span ptrace.Span, s *scratch) {
	at := -1
	for k, v := range span.Attributes().All() {
		at++
		if k == "" || !t.firstByte[k[0]] {
			continue
		}
		if slot, ok := t.slotOf(k, at, s); ok && !s.has[slot] {
			s.has[slot] = true
			s.vals[slot] = v
			s.set = append(s.set, slot)
			s.cand |= t.cand.bySlot[slot]
		}
		// The first byte spares most keys the prefix comparison's call.
		if t.owned != nil && !s.owned && k[0] == t.ownedPrefix[0] && strings.HasPrefix(k, t.ownedPrefix) {
			s.owned = t.owned(k)
		}
	}
}

// slotOf is attrIndex.lookup(k) for the attribute at position at. The
// spans of a batch mostly carry the same keys in the same order (one
// producer wrote them): a key equal to the one found at that position
// before is answered by one comparison with the table's own copy.
func (t *Table) slotOf(k string, at int, s *scratch) (int, bool) {
	if at >= len(s.seen) {
		return t.attrIndex.lookup(k)
	}
	if seen := &s.seen[at]; seen.key == k {
		return seen.slot, true
	}
	e := t.attrIndex.entry(k)
	if e == nil {
		return 0, false
	}
	s.seen[at] = *e
	return e.slot, true
}

// hasEvent reports whether the span has an event of the given slot. The
// events are scanned once per span at most, and only as far as the answer
// needs: a span of chunk events shows one in its first few, so its events
// are not walked twice (here, then for its output times). A later question
// resumes where the scan stopped; names already seen answer at once.
func (t *Table) hasEvent(span ptrace.Span, slot int, s *scratch) bool {
	if s.eventSeen[slot] {
		return true
	}
	evs := span.Events()
	// Chunk events come in long runs of one name: look each run up once.
	last, cached := "", false
	for ; s.scanned < evs.Len(); s.scanned++ {
		name := evs.At(s.scanned).Name()
		if cached && name == last {
			continue
		}
		last, cached = name, true
		if k, ok := t.eventIndex.lookup(name); ok {
			s.eventSeen[k] = true
			if k == slot {
				s.scanned++
				return true
			}
		}
	}
	return false
}

// classify returns the preset claiming the span, or nil.
func (t *Table) classify(span ptrace.Span, scope *Scope, s *scratch) *compiled {
	if s.has[t.opSlot] {
		if v := s.vals[t.opSlot]; v.Type() == pcommon.ValueTypeStr && !preset.IsGenerationOperation(v.Str()) {
			return nil
		}
	}
	view := spanView{name: span.Name(), kind: span.Kind(), scope: scope, span: span, t: t}
	// The presets the set allows, in matching order: its bits from the
	// lowest, then the presets beyond what the set covers.
	for set := t.cand.always | s.cand | t.cand.named(view.name); set != 0; set &= set - 1 {
		if i := bits.TrailingZeros64(set); t.presets[i].matches(&view, s) {
			return &t.presets[i]
		}
	}
	for i := maxFiltered; i < len(t.presets); i++ {
		if t.presets[i].matches(&view, s) {
			return &t.presets[i]
		}
	}
	return nil
}

// Derive classifies span and, if a preset claims it, derives its values into
// res and returns true. It returns false, at the cost of one scan of the
// attribute keys and event names, for any other span. res is overwritten;
// reuse it across calls. res.Marked is set in both cases; the rest of res
// only when Derive returns true. The span's scope is taken as unknown: use
// DeriveIn where it is known.
func (t *Table) Derive(span ptrace.Span, res *Result) bool {
	return t.derive(span, Scope{}, nil, res)
}

// DeriveIn is Derive for a span of the given instrumentation scope (see
// ScopeOf): presets may match on the scope name, and the scope's convention
// version decides what a missing stream flag means.
func (t *Table) DeriveIn(span ptrace.Span, scope Scope, res *Result) bool {
	return t.derive(span, scope, nil, res)
}

// Steps are the output times of a request's step spans (trace assembly),
// in Unix ns, with each step's token count (-1 when unknown).
type Steps struct {
	Times  []uint64
	Counts []int64
}

// StepSource is the trace assembly's one hook into the derivation. For a
// span whose preset has step spans, Derive asks it, once the span's own
// token count is read, for the steps that complete the request: the span is
// then derived once, from them. It returns nil when they are not all there.
type StepSource interface {
	Steps(span ptrace.Span, p *preset.Preset, outputTokens int64, hasOutputTokens bool) *Steps
}

// DeriveWithSteps is Derive for a request whose output times come from the
// given step spans rather than from its own events (a request the trace
// assembly held, released). steps may be empty; the StepSource is not asked.
func (t *Table) DeriveWithSteps(span ptrace.Span, scope Scope, steps *Steps, res *Result) bool {
	if steps == nil {
		steps = &Steps{}
	}
	return t.derive(span, scope, steps, res)
}

// noSteps is DeriveOwn's steps: none, and the StepSource not asked.
var noSteps = &Steps{}

// DeriveOwn is Derive from the span's own attributes and events alone, as
// without trace assembly: the StepSource is not asked (a held request
// whose steps are incomplete).
func (t *Table) DeriveOwn(span ptrace.Span, scope Scope, res *Result) bool {
	return t.derive(span, scope, noSteps, res)
}

// PresetAt returns the preset at index i of the matching order.
func (t *Table) PresetAt(i int) *preset.Preset { return t.presets[i].p }

func (t *Table) derive(span ptrace.Span, scope Scope, steps *Steps, res *Result) bool {
	s := t.getScratch()
	defer t.putScratch(s)
	t.scan(span, s)
	c := t.classify(span, &scope, s)
	if c == nil {
		res.Marked = s.owned
		return false
	}
	s.fields = c.fieldsPresent(s)
	q, g, w := res.Qualifiers[:0], res.Gaps[:0], res.GapWeights[:0]
	*res = Result{Preset: c.p.Name, PresetIndex: c.index, Layer: c.p.Layer, Qualifiers: q, Gaps: g, GapWeights: w,
		Marked: s.owned}
	c.derive(t, span, &scope, s, steps, res)
	// The scope says which instrumentation wrote the span; a span of a
	// scope that states no level gets none (never guessed from its name).
	if lvl := scope.Level(); lvl != "" {
		res.Level = lvl
		res.Qualifiers = append(res.Qualifiers, levelQualifiers[lvl])
	}
	return true
}

// readsEvents reports whether the preset takes output times from events.
func (c *compiled) readsEvents() bool { return len(c.chunk) > 0 || len(c.first) > 0 }

// Source returns the "<preset>:<origin>" string of a result from this table,
// without allocating in the common case of no qualifiers.
func (t *Table) Source(res *Result) string {
	src := t.presets[res.PresetIndex].source[res.Origin]
	if len(res.Qualifiers) == 0 {
		return src
	}
	return src + "," + strings.Join(res.Qualifiers, ",")
}

func nanos(d uint64) float64 { return float64(d) / 1e9 }
