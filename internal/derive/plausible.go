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
// it in llm.metrics.source; it never writes a different number. This file
// is the one list of them: a rule not listed here does not run.
var plausibilityRules = [...]func(*request){
	(*request).implausibleOutputTokens, // plausible_tokens.go
	(*request).endedBeforeStream,       // plausible_early_end.go
	(*request).partsBeyondWhole,        // plausible_parts.go
}

// plausible runs the rules on the values derived so far.
func (r *request) plausible() {
	for _, rule := range plausibilityRules {
		rule(r)
	}
}
