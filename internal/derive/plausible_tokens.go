// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package derive

// singleTokenTail is how long a stream of one output token may run after
// it: the stop and usage events follow the token at once. A stream still
// open longer after its first output carried more.
const singleTokenTail = 0.1

// Rule: output tokens below 2 on a stream whose own evidence shows more.
// Producers that write such counts: OpenLIT's Responses streams without
// usage (0 output tokens), Traceloop's Anthropic instrumentation when the
// final usage is missing (the placeholder 1 of message_start). With N < 2
// TPOT does not apply and the verdict would be met; the count is left
// unknown instead (output_tokens:implausible), so TPOT is unknown. The
// evidence of more: two output events or more, the producer's own mean
// chunk gap (it needs two chunks), no token at all after a first output
// (a known TTFT), or a stream still open singleTokenTail after its first
// output. OpenLIT's Anthropic count of N+1 is not detectable from a span.
func (r *request) implausibleOutputTokens() {
	res := r.res
	if !res.HasOutputTokens || res.Stream != True || res.Failed || res.OutputTokens >= 2*r.seqs {
		return
	}
	if r.res.Errors[FieldOutputTokens] != NoReason || !r.moreThanOneOutput() {
		return
	}
	res.OutputTokens, res.HasOutputTokens = 0, false
	r.errs.Set(FieldOutputTokens, Implausible)
}

// moreThanOneOutput reports whether the span shows more output than one
// token per sequence (or any output when it counts none).
func (r *request) moreThanOneOutput() bool {
	res := r.res
	if len(r.out.times) >= 2 {
		return true
	}
	if v, u, ok := firstTiming(r.c.itlMean, r.s); ok {
		if x, reason := parseSeconds(v, u, r.start); reason == NoReason && x > 0 {
			return true
		}
	}
	if res.TTFT.S != Known {
		return false
	}
	return res.OutputTokens == 0 || res.E2E.S == Known && res.E2E.V-res.TTFT.V > singleTokenTail
}
