// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package derive

import (
	"cmp"
	"slices"
	"strings"
	"sync"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmslo/llmslo/internal/preset"
)

// Table is a set of presets compiled for one-pass reading: every attribute
// key and event name that any preset reads gets a slot, so a span's
// attributes are scanned once, whatever the number of presets, and its
// events once for the preset that claims it (plus one count by name when a
// preset's event condition is asked). Build it once per configuration; it
// is read-only afterwards and safe for concurrent use.
type Table struct {
	presets []compiled

	attrSlot map[string]int
	// attrIndex is attrSlot for the scan (keyIndex says why).
	attrIndex keyIndex
	// firstByte filters keys before the map lookup: a span of an unrelated
	// library (http.*, db.*, ...) costs one byte test per attribute.
	firstByte [256]bool
	eventSlot map[string]int
	// eventIndex is eventSlot for the events of every span.
	eventIndex keyIndex
	cand       candidates
	numAttrs   int
	numEvents  int
	opSlot     int
	// ownedPrefix and owned recognize the processor's own keys (Options).
	ownedPrefix string
	owned       func(string) bool

	tokenAware bool
	steps      StepSource
	pool       sync.Pool // of *scratch
}

type condKind uint8

const (
	condSpanName condKind = iota
	condSpanNameContains
	condAttr
	condEvent
	condScope
	condSpanKind
)

var spanKinds = map[string]ptrace.SpanKind{
	"internal": ptrace.SpanKindInternal, "server": ptrace.SpanKindServer, "client": ptrace.SpanKindClient,
	"producer": ptrace.SpanKindProducer, "consumer": ptrace.SpanKindConsumer,
}

type compiledCond struct {
	kind     condKind
	text     string
	slot     int
	values   []string
	spanKind ptrace.SpanKind // condSpanKind
}

// spanView is what recognition reads besides the scanned attributes.
type spanView struct {
	name  string
	kind  ptrace.SpanKind
	scope *Scope
	// span and t count the events when an event condition asks.
	span ptrace.Span
	t    *Table
}

type timing struct {
	slot int
	unit preset.Unit
}

type compiled struct {
	p              *preset.Preset
	index          int
	any, all, none []compiledCond

	ttft, e2e, itlMean, queue   []timing
	prefill, kvTransfer, decode []timing
	// ttftQualifier[i]: the qualifier of a TTFT read from ttft[i] ("" for
	// none: ttft=first_part, ttft=first_event);
	// firstPartEv are such first-token events, firstPartUnless the
	// attributes that show a release stamping the first output instead.
	ttftQualifier   []string
	firstPartEv     []int
	firstPartUnless []int
	// streamJSON are the preset's StreamJSON attributes.
	streamJSON []int
	// chunkTTFT are the conventions' time-to-first-chunk attributes among
	// ttft: written on streamed calls only, so evidence of a stream.
	chunkTTFT             []timing
	output, input, reqN   []countSlot
	cacheRead, cacheWrite []countSlot
	reasoning             []countSlot
	streamByName          map[string]bool
	stream, mdl           []int
	chunk, first          []int // event slots
	tokenCount            string

	source [NumOrigins]string // "<name>:<origin>", by Origin

	// fieldsOf[slot] has bit f set when the slot is among field f's
	// timing or token-count attributes: the fields a span can give are
	// the union over the slots its scan found (fieldsPresent), and a field
	// none of whose attributes is there is answered without reading its list.
	fieldsOf []uint32
}

// fieldsOf's bits hold every Field.
var _ [32 - NumFields]struct{}

// indexFields fills c.fieldsOf for a table of numAttrs slots.
func (c *compiled) indexFields(numAttrs int) {
	c.fieldsOf = make([]uint32, numAttrs)
	markField(c.fieldsOf, FieldTTFT, c.ttft)
	markField(c.fieldsOf, FieldE2E, c.e2e)
	markField(c.fieldsOf, FieldITL, c.itlMean)
	markField(c.fieldsOf, FieldQueueTime, c.queue)
	markField(c.fieldsOf, FieldPrefillTime, c.prefill)
	markField(c.fieldsOf, FieldKVTransferTime, c.kvTransfer)
	markField(c.fieldsOf, FieldDecodeTime, c.decode)
	markField(c.fieldsOf, FieldOutputTokens, c.output)
	markField(c.fieldsOf, FieldInputTokens, c.input)
	markField(c.fieldsOf, FieldRequestN, c.reqN)
	markField(c.fieldsOf, FieldCacheReadInputTokens, c.cacheRead)
	markField(c.fieldsOf, FieldCacheWriteInputTokens, c.cacheWrite)
	markField(c.fieldsOf, FieldReasoningOutputTokens, c.reasoning)
}

// slotted is an attribute a field reads: a timing or a token count.
type slotted interface{ slotOf() int }

func (x timing) slotOf() int    { return x.slot }
func (x countSlot) slotOf() int { return x.slot }

// markField sets field f's bit in fieldsOf at each slot of list.
func markField[T slotted](fieldsOf []uint32, f Field, list []T) {
	for _, x := range list {
		fieldsOf[x.slotOf()] |= 1 << f
	}
}

// fieldsPresent is the set of fields (bit f for Field f) with an attribute
// the scan found.
func (c *compiled) fieldsPresent(s *scratch) uint32 {
	var f uint32
	for _, slot := range s.set {
		f |= c.fieldsOf[slot]
	}
	return f
}

// Options tune the derivation.
type Options struct {
	// TokenAwareITL divides each chunk's gap by the chunk's token count,
	// spreading it over the tokens it delivered (SGLang's native backend,
	// DistServe). Off: one gap per chunk (vLLM, the GenAI conventions).
	TokenAwareITL bool
	// OwnedPrefix and Owned, if set, recognize the processor's own keys
	// (Owned is asked only about keys starting with OwnedPrefix): their
	// presence, found in the same pass, is reported as Result.Marked.
	OwnedPrefix string
	Owned       func(key string) bool
	// Steps, if set, is asked for the step spans of a request whose preset
	// has them (the trace assembly).
	Steps StepSource
	// SkipParts leaves the engine's prefill, KV transfer and decode times
	// unread (Unknown), for a processor that neither writes them nor has
	// an SLO whose causes read them: their keys are not even looked for.
	SkipParts bool
}

// NewTable compiles presets, in matching order.
func NewTable(presets []*preset.Preset, opts Options) *Table {
	t := &Table{attrSlot: map[string]int{}, eventSlot: map[string]int{}, tokenAware: opts.TokenAwareITL, steps: opts.Steps}
	t.opSlot = t.attr(preset.OperationNameKey)
	if opts.OwnedPrefix != "" && opts.Owned != nil {
		t.ownedPrefix, t.owned = opts.OwnedPrefix, opts.Owned
		t.firstByte[opts.OwnedPrefix[0]] = true
	}
	for _, p := range presets {
		c := compiled{p: p, index: len(t.presets), tokenCount: p.Ev.TokenCount}
		c.any = t.conds(p.Match.Any)
		c.all = t.conds(p.Match.All)
		c.none = t.conds(p.Match.None)
		c.ttft = t.timings(p.Map.TTFT)
		for _, x := range p.Map.TTFT {
			c.ttftQualifier = append(c.ttftQualifier, ttftQualifier(x))
		}
		c.firstPartEv = t.events(p.Ev.FirstPart)
		c.firstPartUnless = t.attrs(p.FirstPartUnless)
		c.chunkTTFT = t.timings(firstChunkTimings(p.Map.TTFT))
		c.e2e = t.timings(p.Map.E2E)
		c.itlMean = t.timings(p.Map.ITLMean)
		c.queue = t.timings(p.Map.QueueTime)
		if !opts.SkipParts {
			c.prefill = t.timings(p.Map.PrefillTime)
			c.kvTransfer = t.timings(p.Map.KVTransferTime)
			c.decode = t.timings(p.Map.DecodeTime)
		}
		c.output = t.counts(p.Map.OutputTokens)
		c.input = t.counts(p.Map.InputTokens)
		c.reqN = t.counts(p.Map.RequestN)
		c.cacheRead = t.counts(p.Map.CacheReadInputTokens)
		c.cacheWrite = t.counts(p.Map.CacheWriteInputTokens)
		c.reasoning = t.counts(p.Map.ReasoningOutputTokens)
		c.streamByName = p.StreamBySpanName
		c.stream = t.attrs(p.Map.Stream)
		c.streamJSON = t.attrs(p.StreamJSON)
		c.mdl = t.attrs(p.Map.Model)
		c.chunk = t.events(p.Ev.Chunk)
		c.first = t.events(p.Ev.FirstToken)
		for o := range c.source {
			c.source[o] = p.Name + ":" + Origin(o).String()
		}
		t.presets = append(t.presets, c)
	}
	for i := range t.presets {
		t.presets[i].indexFields(t.numAttrs)
	}
	t.attrIndex = newKeyIndex(t.attrSlot)
	t.eventIndex = newKeyIndex(t.eventSlot)
	t.cand = newCandidates(t.presets, t.numAttrs)
	return t
}

func (t *Table) attr(key string) int {
	if s, ok := t.attrSlot[key]; ok {
		return s
	}
	s := t.numAttrs
	t.attrSlot[key] = s
	t.numAttrs++
	if key != "" {
		t.firstByte[key[0]] = true
	}
	return s
}

func (t *Table) attrs(keys []string) []int {
	var out []int
	for _, k := range keys {
		out = append(out, t.attr(k))
	}
	return out
}

// countSlot is a token-count attribute, or with a field, a number inside a
// JSON object held by a string attribute ("key#field": Langfuse keeps its
// usage as `{"input": 120, "output": 40}`).
type countSlot struct {
	slot  int
	field string
}

func (t *Table) counts(keys []string) []countSlot {
	var out []countSlot
	for _, k := range keys {
		key, field, _ := strings.Cut(k, "#")
		out = append(out, countSlot{slot: t.attr(key), field: field})
	}
	return out
}

func (t *Table) timings(ts []preset.TimingAttr) []timing {
	var out []timing
	for _, x := range ts {
		out = append(out, timing{slot: t.attr(x.Key), unit: x.Unit})
	}
	return out
}

func (t *Table) event(name string) int {
	if s, ok := t.eventSlot[name]; ok {
		return s
	}
	s := t.numEvents
	t.eventSlot[name] = s
	t.numEvents++
	return s
}

func (t *Table) events(names []string) []int {
	var out []int
	for _, n := range names {
		out = append(out, t.event(n))
	}
	return out
}

// conds compiles a preset's conditions with the event conditions last:
// each list is an AND or an OR of side-effect-free tests, so the order
// does not change the outcome, and a span claimed or refused by its name
// or attributes then never has its events counted.
func (t *Table) conds(cs []preset.Cond) []compiledCond {
	out := t.condsInOrder(cs)
	slices.SortStableFunc(out, func(a, b compiledCond) int {
		return cmp.Compare(boolInt(a.kind == condEvent), boolInt(b.kind == condEvent))
	})
	return out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (t *Table) condsInOrder(cs []preset.Cond) []compiledCond {
	var out []compiledCond
	for _, c := range cs {
		switch {
		case c.SpanName != "":
			out = append(out, compiledCond{kind: condSpanName, text: c.SpanName})
		case c.SpanNameContains != "":
			out = append(out, compiledCond{kind: condSpanNameContains, text: c.SpanNameContains})
		case c.Attribute != "":
			out = append(out, compiledCond{kind: condAttr, slot: t.attr(c.Attribute), values: slices.Clone(c.AttributeValues)})
		case c.Event != "":
			out = append(out, compiledCond{kind: condEvent, slot: t.event(c.Event)})
		case c.Scope != "":
			out = append(out, compiledCond{kind: condScope, text: c.Scope})
		case c.SpanKind != "":
			out = append(out, compiledCond{kind: condSpanKind, spanKind: spanKinds[c.SpanKind]})
		}
	}
	return out
}

// eventKind classifies event names for this preset.
func (c *compiled) eventKind(t *Table) func(string) eventKind {
	return func(name string) eventKind {
		slot, ok := t.eventIndex.lookup(name)
		if !ok {
			return notOutput
		}
		if slices.Contains(c.chunk, slot) {
			return chunkEvent
		}
		if slices.Contains(c.first, slot) {
			return firstTokenEvent
		}
		return notOutput
	}
}

func (c *compiledCond) holds(v *spanView, s *scratch) bool {
	switch c.kind {
	case condSpanName:
		return v.name == c.text
	case condSpanNameContains:
		return strings.Contains(v.name, c.text)
	case condScope:
		return v.scope.Name == c.text
	case condSpanKind:
		return v.kind == c.spanKind
	case condAttr:
		if !s.has[c.slot] {
			return false
		}
		if len(c.values) == 0 {
			return true
		}
		v := s.vals[c.slot]
		return v.Type() == pcommon.ValueTypeStr && slices.Contains(c.values, v.Str())
	default:
		return v.t.hasEvent(v.span, c.slot, s)
	}
}

func (c *compiled) matches(v *spanView, s *scratch) bool {
	anyHolds := false
	for i := range c.any {
		if c.any[i].holds(v, s) {
			anyHolds = true
			break
		}
	}
	if !anyHolds {
		return false
	}
	for i := range c.all {
		if !c.all[i].holds(v, s) {
			return false
		}
	}
	for i := range c.none {
		if c.none[i].holds(v, s) {
			return false
		}
	}
	return true
}

// firstChunkTimings are the conventions' time-to-first-chunk attributes
// of ts (gen_ai.response.time_to_first_chunk and its metric-named kin).
func firstChunkTimings(ts []preset.TimingAttr) []preset.TimingAttr {
	var out []preset.TimingAttr
	for _, x := range ts {
		if strings.HasPrefix(x.Key, "gen_ai.") && strings.HasSuffix(x.Key, ".time_to_first_chunk") {
			out = append(out, x)
		}
	}
	return out
}
