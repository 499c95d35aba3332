// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package derive

import (
	"math"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmslo/llmslo/internal/preset"
)

// request is the working state of one derivation, shared by the formulas
// below. Each formula is one row of the Formulas table (docs/processor.md) and sets its
// own fields of the Result.
type request struct {
	c    *compiled
	s    *scratch
	span ptrace.Span
	// scope is what the span's instrumentation scope says of its producer
	// (a copy: a pointer in request would move the caller's to the heap).
	scope Scope
	res   *Result
	errs  *Errors
	out   *outputEvents

	start, end uint64
	// spanOK: the span's timestamps are usable (present, ordered, within
	// MaxSeconds of each other), so every value taken from a timestamp
	// inside the span is within the bounds too.
	spanOK bool
	// outputs is where the output times came from: FromEvents or FromSteps.
	outputs   Origin
	hasOutput bool
	// firstKnown: the first output is among the output times (the SDK
	// dropped no events, or the times came from steps).
	firstKnown bool
	// firstPartEvent: the span carries a first-token event its producer
	// stamps at the first stream part (Events.FirstPart).
	firstPartEvent bool
	client         bool
	// ttftNs and e2eNs keep values taken from timestamps in integer ns (-1:
	// not from timestamps), so that TPOT of two of them is exact.
	ttftNs, e2eNs int64
	// seqs is the number of sequences the output tokens are summed over.
	seqs int64
}

func (c *compiled) derive(t *Table, span ptrace.Span, scope *Scope, s *scratch, steps *Steps, res *Result) {
	r := request{c: c, s: s, span: span, scope: *scope, res: res, errs: &res.Errors, out: &s.out,
		client: c.p.Layer == preset.LayerClient, ttftNs: -1, e2eNs: -1, seqs: 1}
	r.checkSpan()
	r.outputTokenAttr()
	switch {
	case steps == noSteps:
		steps = nil
	case steps == nil && t.steps != nil && c.p.Steps != nil:
		steps = t.steps.Steps(span, c.p, res.OutputTokens, res.HasOutputTokens)
	}
	res.Assembled = steps != nil
	r.collectOutputs(t, steps)
	r.stream()
	r.tokens()
	r.ttft()
	r.e2e()
	r.parts()
	r.plausible()
	r.itl(t.tokenAware)
	r.tpot()
	r.model()
}

// parts: queue time and the other parts of TTFT and E2E, as the engine
// reports them (README, "Formulas"), each range-checked on its own.
func (r *request) parts() {
	c, s, res := r.c, r.s, r.res
	res.QueueTime, _ = timingValue(c.queue, s, r.start, FieldQueueTime, r.errs)
	res.PrefillTime, _ = timingValue(c.prefill, s, r.start, FieldPrefillTime, r.errs)
	res.KVTransferTime, _ = timingValue(c.kvTransfer, s, r.start, FieldKVTransferTime, r.errs)
	res.DecodeTime, _ = timingValue(c.decode, s, r.start, FieldDecodeTime, r.errs)
}

// checkSpan refuses span timestamps that cannot be a request: no start, an
// end before the start, a time beyond int64 Unix ns, or longer than
// MaxSeconds. This is the one range check of every value derived from
// timestamps: output times must lie inside the span.
func (r *request) checkSpan() {
	r.start, r.end = uint64(r.span.StartTimestamp()), uint64(r.span.EndTimestamp())
	switch {
	case r.start == 0:
		r.errs.Set(FieldSpan, MissingTimestamps)
	case r.end < r.start:
		r.errs.Set(FieldSpan, EndBeforeStart)
	case r.end > math.MaxInt64:
		r.errs.Set(FieldSpan, OutOfRange)
	case checkNanos(r.start, r.end) != NoReason:
		r.errs.Set(FieldSpan, OutOfRange)
	default:
		r.spanOK = true
	}
	r.res.Failed = r.span.Status().Code() == ptrace.StatusCodeError
}

// collectOutputs gathers the output times: the steps the trace assembly
// joined to this span, or the span's own output events; drops them all when
// they cannot be trusted, and sorts and de-duplicates them otherwise.
func (r *request) collectOutputs(t *Table, steps *Steps) {
	out := r.out
	r.outputs = FromEvents
	switch {
	case steps != nil:
		r.outputs = FromSteps
		out.addSteps(steps)
	case r.c.readsEvents() && r.span.Events().Len() > 0:
		// The counts serve N when the span states none, and token-aware ITL.
		out.collect(r.span, r.c.eventKind(t), r.c.tokenCount, t.tokenAware || !r.res.HasOutputTokens)
	}
	if len(out.times) > 0 || out.firstToken != 0 {
		switch {
		case !r.spanOK:
			out.reset()
		case out.outside(r.start, r.end):
			r.errs.Set(FieldEvents, OutsideSpan)
			out.reset()
		default:
			if out.invalidCount != NoReason {
				r.errs.Set(FieldEvents, out.invalidCount)
			}
			if out.dedupe() {
				r.errs.Set(FieldEvents, Duplicate)
			}
		}
	}
	r.hasOutput = len(out.times) > 0 || out.firstToken != 0
	if r.hasOutput && r.outputs == FromEvents {
		for _, slot := range r.c.firstPartEv {
			if t.hasEvent(r.span, slot, r.s) {
				r.firstPartEvent = true
				break
			}
		}
	}
	// Events the SDK dropped were the oldest: the first output may be gone.
	r.firstKnown = r.outputs == FromSteps || r.span.DroppedEventsCount() == 0
	if r.hasOutput && !r.firstKnown {
		r.errs.Set(FieldEvents, Dropped)
	}
}

// stream: the flag attribute, or evidence of streaming (output times), else
// what the producer's span name or convention version implies.
func (r *request) stream() {
	v, flagged := first(r.c.stream, r.s)
	if flagged {
		flag, reason := parseBool(v)
		if reason != NoReason {
			r.errs.Set(FieldStream, reason)
		}
		r.res.Stream = flag
	}
	switch {
	case r.hasOutput:
		r.res.Stream = True
	case !flagged:
		if v, ok := r.streamParameters(); ok {
			if r.res.Stream = jsonStream(v.Str()); r.res.Stream != Unknown {
				return
			}
		}
		r.res.Stream = r.c.unflaggedStream(r.span, &r.scope, r.s)
	}
}

// streamParameters is the preset's StreamJSON document of the request's
// parameters. A framework-level span's are not read: they are the
// framework's configured model parameters, not the request that went out
// (OpenInference's LangChain instrumentation writes "stream":false for
// ChatOpenAI.stream()); the provider-level span of the same call has them.
func (r *request) streamParameters() (pcommon.Value, bool) {
	if len(r.c.streamJSON) == 0 || r.scope.Level() == preset.LevelFramework {
		return pcommon.Value{}, false
	}
	v, ok := first(r.c.streamJSON, r.s)
	return v, ok && v.Type() == pcommon.ValueTypeStr
}

// maxStreamJSON bounds how much of a parameters document jsonStream reads:
// the stream flag of a request's parameters sits near the start, and a
// span's attribute may be megabytes.
const maxStreamJSON = 4096

// jsonStream reads the "stream" boolean of a JSON object of request
// parameters (Langfuse's model parameters: {"stream":true,...}) without
// decoding it, within its first maxStreamJSON bytes; Unknown when there is
// none.
func jsonStream(doc string) Tri {
	doc = doc[:min(len(doc), maxStreamJSON)]
	for {
		i := strings.Index(doc, `"stream"`)
		if i < 0 {
			return Unknown
		}
		rest := strings.TrimLeft(doc[i+len(`"stream"`):], " \t\r\n")
		if v, ok := strings.CutPrefix(rest, ":"); ok {
			v = strings.TrimLeft(v, " \t\r\n")
			switch {
			case strings.HasPrefix(v, "true"):
				return True
			case strings.HasPrefix(v, "false"):
				return False
			}
			return Unknown
		}
		doc = rest
	}
}

// nonStreaming: a client request known not to stream has no TTFT, TPOT or
// ITL.
func (r *request) nonStreaming() bool { return r.client && r.res.Stream == False }

// outputTokenAttr reads N from the producer's usage count.
func (r *request) outputTokenAttr() {
	r.res.OutputTokens, r.res.HasOutputTokens = countValue(r.c.output, r.s, FieldOutputTokens, r.errs)
}

// tokens: N is the usage count, else the sum of the output times' token
// counts; input tokens and the producer's token details; the number of
// sequences N is summed over.
func (r *request) tokens() {
	c, s, res, errs := r.c, r.s, r.res, r.errs
	n, hasN := res.OutputTokens, res.HasOutputTokens
	if !hasN && errs[FieldOutputTokens] == NoReason && len(r.out.times) > 0 {
		if sum, reason := r.out.tokens(); reason != NoReason {
			errs.Set(FieldOutputTokens, reason)
		} else {
			n, hasN = sum, true
			if r.outputs == FromSteps {
				res.Qualifiers = append(res.Qualifiers, QualifierOutputTokensFromSteps)
			} else {
				res.Qualifiers = append(res.Qualifiers, QualifierOutputTokensFromChunks)
			}
		}
	}
	res.OutputTokens, res.HasOutputTokens = n, hasN
	res.InputTokens, res.HasInputTokens = countValue(c.input, s, FieldInputTokens, errs)
	c.tokenDetails(s, res)
	if k, ok := countValue(c.reqN, s, FieldRequestN, errs); ok && k > 1 {
		r.seqs, res.Sequences = k, k
		res.Qualifiers = append(res.Qualifiers, QualifierRequestN+strconv.FormatInt(k, 10))
	}
}

// ttft: TTFT = t_first − S: the producer's attribute, else the first output.
func (r *request) ttft() {
	c, res, errs := r.c, r.res, r.errs
	attr, present := timingValue(c.ttft, r.s, r.start, FieldTTFT, errs)
	if present && r.client && c.p.TTFTNeedsStreamFlag && res.Stream != True {
		present = false
	}
	// TGI's prefill step gives the first token; SGLang's decode steps do not.
	fromOutputs := r.outputs != FromSteps || c.p.Steps == nil || c.p.Steps.FirstTokenFromSteps
	switch {
	case r.nonStreaming():
		res.TTFT = notApplicable
	case present:
		res.TTFT = attr
		res.Origin = FromAttributes
		r.noteTTFTQualifier(c.ttftQualifier[presentAt(c.ttft, r.s)])
	case r.hasOutput && r.firstKnown && fromOutputs:
		r.ttftNs = int64(r.out.firstOutput() - r.start)
		res.TTFT = known(nanos(uint64(r.ttftNs)))
		res.Origin = r.outputs
		if r.firstPartEvent {
			r.noteTTFTQualifier(QualifierTTFTFirstPart)
		}
	case errs[FieldTTFT] == NoReason && errs[FieldEvents] == NoReason && r.spanOK && !res.Failed:
		errs.Set(FieldTTFT, NotEmitted)
	}
}

// e2e: E2E = t_last − S: the engine's attribute, else the last output, else
// the span.
func (r *request) e2e() {
	res := r.res
	attr, present := timingValue(r.c.e2e, r.s, r.start, FieldE2E, r.errs)
	switch {
	case present:
		res.E2E = attr
		res.Origin = FromAttributes
	case len(r.out.times) > 0:
		r.e2eNs = int64(r.out.times[len(r.out.times)-1] - r.start)
		res.E2E = known(nanos(uint64(r.e2eNs)))
		if res.Origin == FromSpan {
			res.Origin = r.outputs
		}
	case r.spanOK:
		r.e2eNs = int64(r.end - r.start)
		res.E2E = known(nanos(uint64(r.e2eNs)))
	default:
		r.errs.Set(FieldE2E, r.errs[FieldSpan])
	}
}

// itl: the gaps between output times (their mean, max and every gap); else
// the producer's mean; not applicable without a second output, judged per
// sequence (vLLM's n = k sequences of one token each have no gap).
func (r *request) itl(tokenAware bool) {
	res := r.res
	switch {
	case len(r.out.times) >= 2:
		r.out.itl(tokenAware, res)
	case r.nonStreaming() || len(r.out.times) == 1 || res.HasOutputTokens && res.OutputTokens <= r.seqs:
		res.ITLMean, res.ITLMax = notApplicable, notApplicable
	default:
		if v, ok := timingValue(r.c.itlMean, r.s, r.start, FieldITL, r.errs); ok && res.Stream == True {
			res.ITLMean = v
		}
	}
}

// tpot: TPOT = (E2E − TTFT) / (N − 1), N per sequence, defined for N >= 2.
func (r *request) tpot() {
	res, errs := r.res, r.errs
	perSeq := float64(res.OutputTokens) / float64(r.seqs)
	switch {
	case !res.HasOutputTokens:
		if errs[FieldOutputTokens] == NoReason && !res.Failed {
			errs.Set(FieldOutputTokens, NotEmitted)
		}
	case perSeq < 2, res.TTFT.S == NotApplicable:
		res.TPOT = notApplicable
	case res.TTFT.S == Known && res.E2E.S == Known:
		switch {
		case res.E2E.V < res.TTFT.V:
			errs.Set(FieldTPOT, Inconsistent)
		case r.ttftNs >= 0 && r.e2eNs >= 0:
			res.TPOT = known(float64(r.e2eNs-r.ttftNs) / (perSeq - 1) / 1e9)
		default:
			res.TPOT = known((res.E2E.V - res.TTFT.V) / (perSeq - 1))
		}
	}
}

// model: the span's own model attribute; the processor falls back to the
// resource and the configured default.
func (r *request) model() {
	if v, ok := first(r.c.mdl, r.s); ok && v.Type() == pcommon.ValueTypeStr {
		r.res.Model = v.Str()
	}
}
