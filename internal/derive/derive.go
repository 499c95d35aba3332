package derive

import (
	"slices"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmslo/llmslo/internal/preset"
)

// scratch is the per-call working memory, pooled so that the hot path does
// not allocate.
type scratch struct {
	has        []bool
	vals       []pcommon.Value
	eventCount []int
	out        outputEvents
}

func (t *Table) getScratch() *scratch {
	s, _ := t.pool.Get().(*scratch)
	if s == nil || len(s.has) != t.numAttrs {
		s = &scratch{has: make([]bool, t.numAttrs), vals: make([]pcommon.Value, t.numAttrs), eventCount: make([]int, t.numEvents)}
	}
	return s
}

func (t *Table) putScratch(s *scratch) {
	clear(s.has)
	clear(s.vals)
	clear(s.eventCount)
	s.out.reset()
	t.pool.Put(s)
}

// scan reads the span's attributes and event names into s: one pass each.
func (t *Table) scan(span ptrace.Span, s *scratch) {
	for k, v := range span.Attributes().All() {
		if k == "" || !t.firstByte[k[0]] {
			continue
		}
		if slot, ok := t.attrSlot[k]; ok && !s.has[slot] {
			s.has[slot] = true
			s.vals[slot] = v
		}
	}
	if t.numEvents == 0 {
		return
	}
	evs := span.Events()
	// Chunk events come in long runs of one name: look each run up once.
	last, lastSlot, cached := "", -1, false
	for i := 0; i < evs.Len(); i++ {
		name := evs.At(i).Name()
		if !cached || name != last {
			slot, ok := t.eventSlot[name]
			if !ok {
				slot = -1
			}
			last, lastSlot, cached = name, slot, true
		}
		if lastSlot >= 0 {
			s.eventCount[lastSlot]++
		}
	}
}

// classify returns the preset claiming the span, or nil.
func (t *Table) classify(span ptrace.Span, scope *Scope, s *scratch) *compiled {
	if s.has[t.opSlot] {
		if v := s.vals[t.opSlot]; v.Type() == pcommon.ValueTypeStr && !preset.IsGenerationOperation(v.Str()) {
			return nil
		}
	}
	view := spanView{name: span.Name(), kind: span.Kind(), scope: scope}
	for i := range t.presets {
		if t.presets[i].matches(&view, s) {
			return &t.presets[i]
		}
	}
	return nil
}

// Derive classifies span and, if a preset claims it, derives its values into
// res and returns true. It returns false, at the cost of one scan of the
// attribute keys and event names, for any other span. res is overwritten;
// reuse it across calls. The span's scope is taken as unknown: use DeriveIn
// where it is known.
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

// DeriveWithSteps is Derive for a request whose output times come from its
// step spans rather than from its own events. steps may be empty.
func (t *Table) DeriveWithSteps(span ptrace.Span, scope Scope, steps *Steps, res *Result) bool {
	if steps == nil {
		steps = &Steps{}
	}
	return t.derive(span, scope, steps, res)
}

// PresetAt returns the preset at index i of the matching order.
func (t *Table) PresetAt(i int) *preset.Preset { return t.presets[i].p }

func (t *Table) derive(span ptrace.Span, scope Scope, steps *Steps, res *Result) bool {
	s := t.getScratch()
	defer t.putScratch(s)
	t.scan(span, s)
	c := t.classify(span, &scope, s)
	if c == nil {
		return false
	}
	q, g := res.Qualifiers[:0], res.Gaps[:0]
	*res = Result{Preset: c.p.Name, PresetIndex: c.index, Layer: c.p.Layer, Qualifiers: q, Gaps: g,
		Marked: t.markerSlot >= 0 && s.has[t.markerSlot]}
	c.derive(t, span, &scope, s, steps, res)
	return true
}

// first returns the first slot of slots present on the span.
func first(slots []int, s *scratch) (pcommon.Value, bool) {
	for _, slot := range slots {
		if s.has[slot] {
			return s.vals[slot], true
		}
	}
	return pcommon.Value{}, false
}

func firstTiming(ts []timing, s *scratch) (pcommon.Value, preset.Unit, bool) {
	for _, x := range ts {
		if s.has[x.slot] {
			return s.vals[x.slot], x.unit, true
		}
	}
	return pcommon.Value{}, 0, false
}

// timingValue reads the first present attribute of ts. It returns Missing
// and records the reason when the attribute is present but bad.
func timingValue(ts []timing, s *scratch, start uint64, f Field, errs *Errors) (Value, bool) {
	v, u, ok := firstTiming(ts, s)
	if !ok {
		return Value{}, false
	}
	x, r := parseSeconds(v, u, start)
	if r != NoReason {
		errs.Set(f, r)
		return Value{}, true
	}
	return known(x), true
}

func countValue(slots []countSlot, s *scratch, f Field, errs *Errors) (int64, bool, bool) {
	var v pcommon.Value
	found := false
	for _, cs := range slots {
		if !s.has[cs.slot] {
			continue
		}
		v, found = s.vals[cs.slot], true
		if cs.field != "" {
			if v, found = jsonField(v, cs.field); !found {
				continue
			}
		}
		break
	}
	if !found {
		return 0, false, false
	}
	n, r := parseCount(v)
	if r != NoReason {
		errs.Set(f, r)
		return 0, false, true
	}
	return n, true, true
}

func (c *compiled) derive(t *Table, span ptrace.Span, scope *Scope, s *scratch, steps *Steps, res *Result) {
	errs := &res.Errors
	start, end := uint64(span.StartTimestamp()), uint64(span.EndTimestamp())
	spanOK := true
	switch {
	case start == 0:
		errs.Set(FieldSpan, MissingTimestamps)
		spanOK = false
	case end < start:
		errs.Set(FieldSpan, EndBeforeStart)
		spanOK = false
	}
	res.Failed = span.Status().Code() == ptrace.StatusCodeError

	// Output events, when the preset reads them and the span has any; or
	// the steps the trace assembly joined to this span.
	out := &s.out
	outputs := FromEvents
	if steps != nil {
		outputs = FromSteps
		out.times = append(out.times, steps.Times...)
		out.counts = append(out.counts, steps.Counts...)
	} else if c.hasEvents(s) {
		out.collect(span, c.eventKind(t), c.tokenCount)
	}
	if len(out.times) > 0 || out.firstToken != 0 {
		switch {
		case !spanOK:
			out.reset()
		case out.outside(start, end):
			errs.Set(FieldEvents, OutsideSpan)
			out.reset()
		default:
			if out.invalidCount != NoReason {
				errs.Set(FieldEvents, out.invalidCount)
			}
			if out.dedupe() {
				errs.Set(FieldEvents, Duplicate)
			}
		}
	}
	hasOutput := len(out.times) > 0 || out.firstToken != 0
	// Events the SDK dropped were the oldest: the first output may be gone.
	firstKnown := outputs == FromSteps || span.DroppedEventsCount() == 0
	if hasOutput && !firstKnown {
		errs.Set(FieldEvents, Dropped)
	}

	// Stream flag: the attribute, or evidence of streaming, else what the
	// producer's span name or convention version implies.
	flagVal, flagged := first(c.stream, s)
	if flagged {
		flag, r := parseBool(flagVal)
		if r != NoReason {
			errs.Set(FieldStream, r)
		}
		res.Stream = flag
	}
	if hasOutput {
		res.Stream = True
	} else if !flagged {
		res.Stream = c.unflaggedStream(span.Name(), scope, s)
	}
	client := c.p.Layer == preset.LayerClient
	nonStreaming := client && res.Stream == False

	// Output tokens, and the number of sequences they are summed over.
	n, hasN, _ := countValue(c.output, s, FieldOutputTokens, errs)
	if !hasN && errs[FieldOutputTokens] == NoReason && len(out.times) > 0 {
		n, hasN = out.tokens(), true
		if outputs == FromSteps {
			res.Qualifiers = append(res.Qualifiers, "output_tokens_from_steps")
		} else {
			res.Qualifiers = append(res.Qualifiers, "output_tokens_from_chunks")
		}
	}
	res.OutputTokens, res.HasOutputTokens = n, hasN
	res.InputTokens, res.HasInputTokens, _ = countValue(c.input, s, FieldInputTokens, errs)
	c.tokenDetails(s, res)
	seqs := int64(1)
	if k, ok, _ := countValue(c.reqN, s, FieldRequestN, errs); ok && k > 1 {
		seqs = k
		res.Qualifiers = append(res.Qualifiers, "n="+itoa(k))
	}

	// TTFT: the producer's attribute, else the first output event. Values
	// from timestamps are also kept in integer ns, so that TPOT of two
	// timestamp-derived values is as exact as its inputs.
	origin := FromSpan
	ttftNs, e2eNs := int64(-1), int64(-1)
	ttftAttr, ttftPresent := timingValue(c.ttft, s, start, FieldTTFT, errs)
	if ttftPresent && client && c.p.TTFTNeedsStreamFlag && res.Stream != True {
		ttftPresent = false
	}
	switch {
	case nonStreaming:
		res.TTFT = notApplicable
	case ttftPresent:
		res.TTFT = ttftAttr
		origin = FromAttributes
	case hasOutput && firstKnown && (outputs != FromSteps || c.p.Steps == nil || c.p.Steps.FirstTokenFromSteps):
		ttftNs = int64(out.firstOutput() - start)
		res.TTFT = known(nanos(uint64(ttftNs)))
		origin = outputs
	case errs[FieldTTFT] == NoReason && errs[FieldEvents] == NoReason && spanOK && !res.Failed:
		errs.Set(FieldTTFT, NotEmitted)
	}

	// E2E: the engine's attribute, else the last output event, else the span.
	e2eAttr, e2ePresent := timingValue(c.e2e, s, start, FieldE2E, errs)
	switch {
	case e2ePresent:
		res.E2E = e2eAttr
		origin = FromAttributes
	case len(out.times) > 0:
		e2eNs = int64(out.times[len(out.times)-1] - start)
		res.E2E = known(nanos(uint64(e2eNs)))
		if origin == FromSpan {
			origin = outputs
		}
	case spanOK:
		e2eNs = int64(end - start)
		res.E2E = known(nanos(uint64(e2eNs)))
	default:
		errs.Set(FieldE2E, errs[FieldSpan])
	}
	res.Origin = origin

	res.QueueTime, _ = timingValue(c.queue, s, start, FieldQueueTime, errs)

	// ITL: gaps between output events; else the producer's mean.
	switch {
	case len(out.times) >= 2:
		res.ITLMean, res.ITLMax = out.itl(t.tokenAware)
		if outputs == FromSteps {
			// Step spans are not on the request span: keep every gap for
			// the connector's ITL histogram.
			res.Gaps = out.gaps(t.tokenAware, res.Gaps)
		}
	case nonStreaming || len(out.times) == 1 || hasN && n <= 1:
		res.ITLMean, res.ITLMax = notApplicable, notApplicable
	default:
		if v, ok := timingValue(c.itlMean, s, start, FieldITL, errs); ok && res.Stream == True {
			res.ITLMean = v
		}
	}

	// TPOT = (E2E - TTFT) / (N - 1), N per sequence, defined for N >= 2.
	perSeq := float64(n) / float64(seqs)
	switch {
	case !hasN:
		if errs[FieldOutputTokens] == NoReason && !res.Failed {
			errs.Set(FieldOutputTokens, NotEmitted)
		}
	case perSeq < 2:
		res.TPOT = notApplicable
	case res.TTFT.S == NotApplicable:
		res.TPOT = notApplicable
	case res.TTFT.S == Known && res.E2E.S == Known:
		switch {
		case res.E2E.V < res.TTFT.V:
			errs.Set(FieldTPOT, Inconsistent)
		case ttftNs >= 0 && e2eNs >= 0:
			res.TPOT = known(float64(e2eNs-ttftNs) / (perSeq - 1) / 1e9)
		default:
			res.TPOT = known((res.E2E.V - res.TTFT.V) / (perSeq - 1))
		}
	}

	if v, ok := first(c.mdl, s); ok && v.Type() == pcommon.ValueTypeStr {
		res.Model = v.Str()
	}
}

func (c *compiled) hasEvents(s *scratch) bool {
	for _, slot := range c.chunk {
		if s.eventCount[slot] > 0 {
			return true
		}
	}
	for _, slot := range c.first {
		if s.eventCount[slot] > 0 {
			return true
		}
	}
	return false
}

// Source returns the "<preset>:<origin>" string of a result from this table,
// without allocating in the common case of no qualifiers.
func (t *Table) Source(res *Result) string {
	src := t.presets[res.PresetIndex].source[res.Origin]
	if len(res.Qualifiers) == 0 {
		return src
	}
	return src + "," + joinComma(res.Qualifiers)
}

// Presets returns the table's preset names, in matching order.
func (t *Table) Presets() []string {
	names := make([]string, len(t.presets))
	for i := range t.presets {
		names[i] = t.presets[i].p.Name
	}
	return slices.Clip(names)
}

func nanos(d uint64) float64 { return float64(d) / 1e9 }

func itoa(n int64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	return string(b[i:])
}

func joinComma(ss []string) string {
	n := len(ss) - 1
	for _, s := range ss {
		n += len(s)
	}
	b := make([]byte, 0, n)
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, s...)
	}
	return string(b)
}
