// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package derive

// Plausibility before judgement. The formulas are right on their inputs;
// what decides whether a verdict can be trusted is the input, and some
// producers write values known to be wrong. Each rule below guards against
// one producer behaviour (documented in its file and in docs/processor.md,
// "Plausibility rules") and runs on every derived span after the values
// and before TPOT, ITL and the verdicts. A rule turns a value into unknown
// with a reason in llm.metrics.error (<field>:implausible), or qualifies
// it in llm.metrics.source; it never writes a different number. The rules
// are this function's calls, and no other: a rule not called here does not
// run. (Direct calls, not a table of funcs: a call through a func value
// would move the request's working state to the heap, one allocation a
// span.) The TTFT qualifiers (plausible_ttft.go) are noted where the TTFT
// is read.
func (r *request) plausible() {
	r.implausibleOutputTokens() // plausible_tokens.go
	r.endedBeforeStream()       // plausible_early_end.go
	r.partsBeyondWhole()        // plausible_parts.go
}
