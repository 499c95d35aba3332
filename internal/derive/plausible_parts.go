// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package derive

// Rule: a part longer than what it divides. Queue, prefill and KV transfer
// are parts of the request's TTFT, decode a part of its E2E (docs/processor.md,
// "Why a request missed"); a sender that writes a prefill of 86,400 s on a
// 0.9 s TTFT would otherwise pick its own miss cause (ttft:prefill). Such a
// part is left unknown (<part>:implausible) and never chosen as a cause;
// the TTFT and E2E themselves stay as they are. Parts come from another
// clock than TTFT and E2E (the engine's scheduler), so a part is refused
// only beyond partSlack of what it divides.
func (r *request) partsBeyondWhole() {
	res := r.res
	r.partBeyond(&res.QueueTime, FieldQueueTime, &res.TTFT)
	r.partBeyond(&res.PrefillTime, FieldPrefillTime, &res.TTFT)
	r.partBeyond(&res.KVTransferTime, FieldKVTransferTime, &res.TTFT)
	r.partBeyond(&res.DecodeTime, FieldDecodeTime, &res.E2E)
}

// partBeyond refuses part, field f, when it exceeds whole beyond the
// slack. A call per part, inlined: the table of parts this was written
// over first cost a copy of every value on every span.
func (r *request) partBeyond(part *Value, f Field, whole *Value) {
	if part.S == Known && whole.S == Known && part.V > whole.V*(1+partSlack)+partSlackSeconds {
		*part = Value{}
		r.errs.Set(f, Implausible)
	}
}

// partSlack and partSlackSeconds bound how far a part may exceed what it
// divides before it is refused: the two clocks' rounding (vLLM's parts
// and TTFT are taken at different points of one scheduler step).
const (
	partSlack        = 0.01
	partSlackSeconds = 0.001
)
