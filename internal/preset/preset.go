// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

// Package preset describes, per LLM telemetry producer, how to recognize its
// request spans and where each latency input lives on them. A preset is data,
// not code: the derivation in package derive reads any preset the same way,
// and a user-defined preset in the configuration is as capable as a built-in.
package preset

import (
	"fmt"
	"slices"
	"strings"

	"github.com/llmslo/llmslo/internal/contract"
)

// Layer values: which side of the network the span's producer sits on.
// The words are the contract's (llm.layer), defined there.
const (
	LayerClient = contract.LayerClient
	LayerServer = contract.LayerServer
)

// Unit is the unit of a timing attribute's value.
type Unit uint8

const (
	// Seconds: a number of seconds (the convention of every known producer).
	Seconds Unit = iota
	Milliseconds
	Microseconds
	Nanoseconds
	// Duration: a string such as "1.5ms", "2.5s" or "850µs" (Go's
	// time.Duration and Rust's Debug format of std::time::Duration).
	Duration
	// Timestamp: an absolute time (RFC 3339, possibly JSON-quoted, or Unix
	// nanoseconds); the field is that time minus the span start.
	Timestamp
)

var unitNames = map[string]Unit{"s": Seconds, "ms": Milliseconds, "us": Microseconds, "µs": Microseconds, "ns": Nanoseconds, "duration": Duration, "timestamp": Timestamp}

// UnitNames lists the spellings ParseUnit accepts, for error messages.
const UnitNames = `"s", "ms", "us", "ns", "duration", "timestamp"`

// ParseUnit parses a unit name; the empty string means seconds.
func ParseUnit(s string) (Unit, error) {
	if s == "" {
		return Seconds, nil
	}
	u, ok := unitNames[s]
	if !ok {
		return 0, fmt.Errorf("unknown unit %q: allowed values are %s", s, UnitNames)
	}
	return u, nil
}

// Seconds converts a number in unit u to seconds.
func (u Unit) Seconds(v float64) float64 {
	switch u {
	case Milliseconds:
		return v / 1e3
	case Microseconds:
		return v / 1e6
	case Nanoseconds:
		return v / 1e9
	default:
		return v
	}
}

// TimingAttr names an attribute holding a duration and its unit.
type TimingAttr struct {
	Key  string
	Unit Unit
	// FirstPart: the producer stamps this time at the first stream part of
	// any kind (a role-only chunk too), not at the first output: the TTFT
	// it gives is early, and the TPOT from it late (the ttft=first_part
	// qualifier says so on the span).
	FirstPart bool
	// FirstEvent: the producer times this from the response's headers to
	// its first server-sent event of any kind (OpenLIT's stream wrappers,
	// started once create() returns, stamp every chunk): a TTFT from the
	// wrong events, qualified ttft=first_event.
	FirstEvent bool
}

// Mapping says which span attributes feed each derived field. Where a field
// lists several keys, the first one present on the span is used.
type Mapping struct {
	TTFT      []TimingAttr // time to first token (or chunk)
	E2E       []TimingAttr // request start to last token
	ITLMean   []TimingAttr // a producer's own mean inter-chunk gap (OpenLIT)
	QueueTime []TimingAttr // time waiting in the engine's queue
	// The engine's own parts of TTFT and E2E: prefill (scheduled to first
	// token, after the queue), KV cache transfer between a prefill and a
	// decode worker, decode (first token to last).
	PrefillTime    []TimingAttr
	KVTransferTime []TimingAttr
	DecodeTime     []TimingAttr

	// OutputTokens and InputTokens may name "key#field": a number inside a
	// JSON object held by a string attribute.
	OutputTokens []string
	InputTokens  []string
	// RequestN is the number of sequences sampled for the request (vLLM's
	// gen_ai.request.n): the engine sums output tokens over them.
	RequestN []string
	Stream   []string // bool, or a string "true"/"True"/"false"/"False"
	Model    []string

	// Token details, recorded as the producer gives them (never derived):
	// input tokens read from the provider's prompt cache, input tokens
	// written to it, and the reasoning tokens among the output tokens.
	CacheReadInputTokens  []string
	CacheWriteInputTokens []string
	ReasoningOutputTokens []string
}

// Events says which span events mark output.
type Events struct {
	// Chunk events each carry output (one streamed chunk or token).
	Chunk []string
	// FirstToken events mark only the first output (OpenInference): they give
	// TTFT but no inter-token gaps.
	FirstToken []string
	// FirstPart are the FirstToken events the producer stamps at the first
	// stream part of any kind (see TimingAttr.FirstPart).
	FirstPart []string
	// TokenCount is the attribute of a chunk event holding the number of
	// output tokens in that chunk. An event whose count is 0 is not output
	// (a role-only or usage-only chunk). Events without it count as output.
	TokenCount string
}

// Cond is one recognition test. Exactly one of its fields is set.
type Cond struct {
	SpanName         string   // the span name equals this
	SpanNameContains string   // the span name contains this
	Attribute        string   // this span attribute is present
	AttributeValues  []string // ... and, if set, has one of these string values
	Event            string   // a span event of this name is present
	// Scope: the span's instrumentation scope name equals this (Strands
	// names its tracer strands.telemetry.tracer, Pydantic AI pydantic-ai).
	Scope string
	// SpanKind: the span's kind is this, one of SpanKindNames.
	SpanKind string
}

// SpanKindNames are the values of Cond.SpanKind.
var SpanKindNames = []string{"internal", "server", "client", "producer", "consumer"}

// Match recognizes a producer's request spans: the span must satisfy at
// least one of Any, every one of All and none of None.
type Match struct {
	Any  []Cond
	All  []Cond
	None []Cond
}

func (m *Match) conds() []Cond { return slices.Concat(m.Any, m.All, m.None) }

// StepTime says which end of a step span marks its output.
type StepTime uint8

const (
	StepEnd StepTime = iota
	StepStart
)

// Steps describes per-step child spans that carry a request's token timing
// (SGLang's decode_loop, TGI's send_generation). They are only read in the
// processor's opt-in trace-assembly mode, which joins them to the request
// span of the same trace.
type Steps struct {
	// SpanName is the name of the step spans.
	SpanName string
	// Time is the end of the step span that marks its output.
	Time StepTime
	// Counter, if set, is an attribute counting decode steps or tokens so
	// far; the difference between consecutive steps is the step's token
	// count (several with speculative decoding).
	Counter string
	// FirstTokenFromSteps is true when the first step carries the first
	// token (TGI's prefill step), so TTFT is the first step's time.
	FirstTokenFromSteps bool
	// Generation, if set, is an attribute holding the Rust Debug text of
	// the step's output (TGI's send_generation records its Generation):
	// the entries of its tokens' ids are the step's tokens, and the last
	// step of a request carries generated_text: Some(GeneratedText { ..
	// generated_tokens: N .. }), the request's token count.
	Generation string
}

// Preset is one producer's recognition rule and attribute mapping.
type Preset struct {
	Name  string
	Layer string
	Match Match
	Map   Mapping
	Ev    Events
	// TTFTNeedsStreamFlag makes the TTFT attribute count only when the
	// span's stream flag says the request streamed: OpenLIT writes the whole
	// duration as TTFT on non-streaming calls.
	TTFTNeedsStreamFlag bool
	// Steps, if set, names the step spans of the trace-assembly mode.
	Steps *Steps
	// StreamBySpanName gives the stream flag of a span that carries none,
	// by its name, for producers whose span name says it: the Vercel AI
	// SDK's ai.streamText.doStream streams, its ai.generateText.doGenerate
	// does not; Strands always streams its "chat" span.
	StreamBySpanName map[string]bool
	// StreamNameAttribute, if set, is a span attribute whose string value
	// StreamBySpanName is looked up by instead of the span name, for spans
	// an exporter renames (Traceloop's SDK renames the AI SDK's).
	StreamNameAttribute string
	// StreamJSON are attributes holding a JSON object of request
	// parameters whose "stream" boolean is the stream flag of a span that
	// carries none (Langfuse's langfuse.observation.model.parameters).
	StreamJSON []string
	// FirstPartUnless are attributes only the producer's releases that
	// stamp the first output (not the first part) write: on a span that
	// carries one, a FirstPart TTFT is the first output's. Without one the
	// TTFT is taken as the first part's (no evidence of the later release).
	FirstPartUnless []string
}

// Validate reports the first problem with a preset, naming the field.
func (p *Preset) Validate() error {
	if p.Name == "" {
		return fmt.Errorf("name must not be empty")
	}
	if p.Layer != LayerClient && p.Layer != LayerServer {
		return fmt.Errorf("preset %q: layer %q: allowed values are %q, %q", p.Name, p.Layer, LayerClient, LayerServer)
	}
	if len(p.Match.Any) == 0 {
		return fmt.Errorf("preset %q: match: at least one condition is required", p.Name)
	}
	for _, c := range p.Match.conds() {
		n := 0
		for _, s := range []string{c.SpanName, c.SpanNameContains, c.Attribute, c.Event, c.Scope, c.SpanKind} {
			if s != "" {
				n++
			}
		}
		if n != 1 {
			return fmt.Errorf("preset %q: match: each condition sets exactly one of span_name, span_name_contains, attribute, event, scope, span_kind", p.Name)
		}
		if len(c.AttributeValues) > 0 && c.Attribute == "" {
			return fmt.Errorf("preset %q: match: values need an attribute", p.Name)
		}
		if c.SpanKind != "" && !slices.Contains(SpanKindNames, c.SpanKind) {
			return fmt.Errorf("preset %q: match: span_kind %q: allowed values are %s", p.Name, c.SpanKind, strings.Join(SpanKindNames, ", "))
		}
	}
	return nil
}

// GenerationOperations are the gen_ai.operation.name values of a request
// that generates output. A span whose gen_ai.operation.name is another value
// (embeddings, execute_tool, invoke_agent, ...) is not an LLM request span,
// whatever preset it would otherwise match.
var GenerationOperations = []string{"chat", "text_completion", "generate_content"}

// OperationNameKey is the semantic-convention operation attribute.
const OperationNameKey = "gen_ai.operation.name"

// IsGenerationOperation reports whether op names a generation.
func IsGenerationOperation(op string) bool { return slices.Contains(GenerationOperations, op) }

// ByName returns the built-in preset called name.
func ByName(name string) (*Preset, bool) {
	for _, p := range Builtin() {
		if p.Name == name {
			return p, true
		}
	}
	return nil, false
}

// Names lists the built-in preset names in matching order.
func Names() []string {
	var names []string
	for _, p := range Builtin() {
		names = append(names, p.Name)
	}
	return names
}

// NamesString is Names joined for error messages.
func NamesString() string { return strings.Join(Names(), ", ") }
