// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

// Package derive turns one LLM request span into TTFT, TPOT, ITL, E2E, queue
// time and token counts, following the project's definitions
// (docs/processor.md, "Formulas"). It reads spans through pdata's zero-allocation accessors and
// never writes to them: writing is the processor's job.
package derive

import (
	"strings"

	"github.com/llmslo/llmslo/internal/preset"
)

// The words of Result.Qualifiers (docs/processor.md, "Attributes
// written", llm.metrics.source), written nowhere else.
const (
	QualifierOutputTokensFromChunks = "output_tokens_from_chunks"
	QualifierOutputTokensFromSteps  = "output_tokens_from_steps"
	// QualifierRequestN prefixes the number of sequences, "n=4".
	QualifierRequestN = "n="
	// QualifierTTFTFirstPart: the TTFT is the producer's time to the first
	// stream part of any kind (a role-only chunk too), earlier than the
	// first output, so TPOT is larger than the true one.
	QualifierTTFTFirstPart = "ttft=first_part"
	// QualifierTTFTFirstEvent: the TTFT is the producer's time from the
	// response headers to the first server-sent event of any kind
	// (OpenLIT's), not from the call to the first output.
	QualifierTTFTFirstEvent = "ttft=first_event"
	// QualifierLevel prefixes the instrumentation level, "level=framework".
	QualifierLevel = "level="
)

// levelQualifiers are the level qualifiers, built once: a span's source
// never allocates for its level word.
var levelQualifiers = map[string]string{
	preset.LevelFramework: QualifierLevel + preset.LevelFramework,
	preset.LevelProvider:  QualifierLevel + preset.LevelProvider,
}

// Status says whether a derived value exists.
type Status uint8

const (
	// Missing: the value applies to this request but could not be derived
	// (not emitted, or the input was bad). An SLO on it cannot be decided.
	Missing Status = iota
	// Known: V holds the value.
	Known
	// NotApplicable: the value has no meaning for this request (TPOT of a
	// one-token output, TTFT of a non-streaming client call). An SLO on it
	// holds, as in vLLM's and DistServe's goodput.
	NotApplicable
)

// Value is a derived duration in seconds.
type Value struct {
	V float64
	S Status
}

func known(v float64) Value { return Value{V: v, S: Known} }

var notApplicable = Value{S: NotApplicable}

// Tri is a boolean that may be unknown.
type Tri uint8

const (
	Unknown Tri = iota
	True
	False
)

// Origin is where TTFT and E2E came from.
type Origin uint8

const (
	// FromSpan: only span start and end were usable.
	FromSpan Origin = iota
	// FromEvents: per-chunk or first-token span events.
	FromEvents
	// FromAttributes: the producer's own timing attributes.
	FromAttributes
	// FromSteps: step spans of the same trace (trace-assembly mode).
	FromSteps
	// NumOrigins is the number of origins.
	NumOrigins
)

var originNames = [...]string{FromSpan: "span", FromEvents: "events", FromAttributes: "attributes", FromSteps: "steps"}

func (o Origin) String() string { return originNames[o] }

// Result is everything derived from one request span.
type Result struct {
	Preset string
	// PresetIndex is the preset's position in the table's matching order.
	PresetIndex int
	Layer       string
	Origin      Origin
	// Qualifiers note how a value was obtained when it departs from the
	// preset's usual path (e.g. "n=4", "output_tokens_from_chunks"), in
	// the order they are decided: tokens, TTFT, level.
	Qualifiers []string
	// TTFTQualified: the TTFT is the producer's own value, known to be
	// measured between the wrong events (a ttft= qualifier); an SLO may
	// take it as unknown (qualified_ttft: unknown).
	TTFTQualified bool
	// Level is the instrumentation level of the span's scope
	// (preset.LevelFramework or LevelProvider), "" when it states none.
	Level string

	TTFT, TPOT, E2E, ITLMean, ITLMax, QueueTime Value
	// The parts of TTFT and E2E the engine reports on its span (another
	// clock than TTFT and E2E: recorded, never mixed into TPOT): prefill,
	// the KV cache transfer of disaggregated serving, decode.
	PrefillTime, KVTransferTime, DecodeTime Value
	// NetworkTime is, on a client span joined to its engine span (trace
	// assembly), client TTFT - engine TTFT (NetworkTime); Missing otherwise.
	NetworkTime Value
	// Gaps holds every inter-token gap in seconds, in order, whenever there
	// are two output times or more (chunk events or step spans).
	// Token-aware, the gap before a chunk of k tokens is one entry gap/k.
	Gaps []float64
	// GapWeights, when not empty, holds the weight (token count) of each
	// entry of Gaps; it is empty when every weight is 1.
	GapWeights []int64

	OutputTokens, InputTokens       int64
	HasOutputTokens, HasInputTokens bool
	// Sequences is the number of sequences OutputTokens is summed over
	// (vLLM's gen_ai.request.n); 0 or 1 means one.
	Sequences int64
	// Token details as the producer gives them: input tokens read from and
	// written to the prompt cache, reasoning tokens among the output.
	CacheReadInputTokens, CacheWriteInputTokens, ReasoningOutputTokens          int64
	HasCacheReadInputTokens, HasCacheWriteInputTokens, HasReasoningOutputTokens bool

	Stream Tri
	Model  string
	// Failed is true when the span's status is Error.
	Failed bool
	// Assembled is true when the output times came from step spans.
	Assembled bool
	// Marked is true when the span carries a key of the processor's
	// namespace (Options.Owned): an earlier tier's, or a forgery.
	Marked bool

	Errors Errors
}

// retainedGaps is the most gaps a Result derived into again keeps room
// for: the processor reuses a run of results from batch to batch, and one
// long stream must not keep every one of them that large.
const retainedGaps = 4096

// Release drops the gap buffers of r grown past retainedGaps; r stays
// valid for the next derivation into it.
func (r *Result) Release() {
	if cap(r.Gaps) > retainedGaps {
		r.Gaps = nil
	}
	if cap(r.GapWeights) > retainedGaps {
		r.GapWeights = nil
	}
}

// Field names a derived input, for error reporting.
type Field uint8

const (
	FieldSpan Field = iota
	FieldEvents
	FieldTTFT
	FieldE2E
	FieldTPOT
	FieldITL
	FieldQueueTime
	FieldPrefillTime
	FieldKVTransferTime
	FieldDecodeTime
	FieldNetworkTime
	FieldOutputTokens
	FieldInputTokens
	FieldRequestN
	FieldStream
	FieldCacheReadInputTokens
	FieldCacheWriteInputTokens
	FieldReasoningOutputTokens
	// FieldModel is the resolved model name (the processor repairs it).
	FieldModel
	// FieldSLOThreshold is a per-request SLO threshold (an SLO's *_from
	// attribute) that could not be read.
	FieldSLOThreshold
	// FieldAssembly is the trace assembly's joining of step spans: a
	// request let go before its steps were complete.
	FieldAssembly
	// NumFields is the number of fields.
	NumFields
)

var fieldNames = [NumFields]string{"span", "events", "ttft", "e2e", "tpot", "itl", "queue_time",
	"prefill_time", "kv_transfer_time", "decode_time", "network_time", "output_tokens", "input_tokens", "request_n", "stream",
	"cache_read.input_tokens", "cache_write.input_tokens", "reasoning.output_tokens", "model", "slo_threshold", "assembly"}

func (f Field) String() string { return fieldNames[f] }

// Reason says why a field is missing or was repaired.
type Reason uint8

const (
	NoReason Reason = iota
	// InvalidValue: negative, NaN, infinite or unparseable.
	InvalidValue
	// InvalidType: a type that cannot hold the field (a bool for a duration).
	InvalidType
	// OutOfRange: a finite value beyond any real request (see the limits).
	OutOfRange
	// EndBeforeStart: the span ends before it starts.
	EndBeforeStart
	// MissingTimestamps: the span has no start time.
	MissingTimestamps
	// OutsideSpan: output events lie before the span start or after its end,
	// so event timing is not used.
	OutsideSpan
	// Duplicate: events with the same name and timestamp were counted once.
	Duplicate
	// NotEmitted: the producer gave nothing for a field that applies.
	NotEmitted
	// Inconsistent: the inputs contradict each other (TTFT after E2E).
	Inconsistent
	// Dropped: the producer's SDK dropped some of the span's events (its
	// event count limit; OpenTelemetry SDKs keep the newest 128 by default),
	// so the first output may be missing: TTFT is not taken from events.
	Dropped
	// Evicted: the trace assembly's memory bound dropped some of this
	// request's steps; values from the steps kept are a lower bound.
	Evicted
	// InvalidUTF8: the value was not valid UTF-8; each invalid byte sequence
	// was replaced by U+FFFD, so a metric backend accepts it as a label.
	InvalidUTF8
	// Overflow: trace assembly held as many request spans as its bounds
	// allow; this one passed at once, derived from its own attributes.
	Overflow
	// ClockSkew: a difference of two producers' clocks came out negative
	// (a client's TTFT below its engine's): the clocks disagree, so the
	// difference is not written.
	ClockSkew
	// Implausible: a plausibility rule (plausible.go) found the value
	// contradicted by the span's other evidence, a known producer defect;
	// it is left unknown, never replaced by another number.
	Implausible
	// WrapsJudged: span:wraps_judged, the span is one instrumentation's
	// wrapper around another LLM span of the same call in the batch (the
	// same model and operation, within its time), which is judged instead:
	// the span carries no value and no verdict, so the call counts once.
	WrapsJudged
	// InsideJudged: span:inside_judged, the span is the inner span of such a
	// pair, and its wrapper carried the evidence (a TTFT) it lacks, so the
	// wrapper is judged instead.
	InsideJudged
	// Incomplete: the trace assembly let the request go (its wait, a
	// shutdown, an eviction) before every step it needs had arrived; its
	// values are its own attributes', none from the steps.
	Incomplete
	// NumReasons is the number of reasons, NoReason included.
	NumReasons
)

var reasonNames = [NumReasons]string{"", "invalid_value", "invalid_type", "out_of_range", "end_before_start", "missing_timestamps", "outside_span", "duplicate", "not_emitted", "inconsistent", "dropped", "evicted", "invalid_utf8", "overflow", "clock_skew", "implausible", "wraps_judged", "inside_judged", "incomplete"}

func (r Reason) String() string { return reasonNames[r] }

// Errors holds at most one reason per field. It is a comparable array so it
// can key a cache of its rendered string.
type Errors [NumFields]Reason

// Set records reason for field unless one is already recorded.
func (e *Errors) Set(f Field, r Reason) {
	if e[f] == NoReason {
		e[f] = r
	}
}

// Empty reports whether no reason is recorded.
func (e *Errors) Empty() bool { return *e == Errors{} }

// Each calls fn for every recorded field and reason, in field order.
func (e *Errors) Each(fn func(Field, Reason)) {
	for f, r := range e {
		if r != NoReason {
			fn(Field(f), r)
		}
	}
}

// String renders "field:reason" pairs joined by commas, e.g.
// "ttft:not_emitted,output_tokens:invalid_value".
func (e *Errors) String() string {
	var b strings.Builder
	e.Each(func(f Field, r Reason) {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(f.String())
		b.WriteByte(':')
		b.WriteString(r.String())
	})
	return b.String()
}

// CopyFrom makes r a copy of src that shares no memory with it, reusing
// r's buffers: a result kept past the run it was derived in.
func (r *Result) CopyFrom(src *Result) {
	q, g, w := r.Qualifiers[:0], r.Gaps[:0], r.GapWeights[:0]
	*r = *src
	r.Qualifiers = append(q, src.Qualifiers...)
	r.Gaps = append(g, src.Gaps...)
	r.GapWeights = append(w, src.GapWeights...)
}
