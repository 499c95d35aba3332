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
	for _, p := range [...]struct {
		v     *Value
		f     Field
		whole Value
	}{
		{&res.QueueTime, FieldQueueTime, res.TTFT},
		{&res.PrefillTime, FieldPrefillTime, res.TTFT},
		{&res.KVTransferTime, FieldKVTransferTime, res.TTFT},
		{&res.DecodeTime, FieldDecodeTime, res.E2E},
	} {
		if p.v.S == Known && p.whole.S == Known && p.v.V > p.whole.V*(1+partSlack)+partSlackSeconds {
			*p.v = Value{}
			r.errs.Set(p.f, Implausible)
		}
	}
}

// partSlack and partSlackSeconds bound how far a part may exceed what it
// divides before it is refused: the two clocks' rounding (vLLM's parts
// and TTFT are taken at different points of one scheduler step).
const (
	partSlack        = 0.01
	partSlackSeconds = 0.001
)
