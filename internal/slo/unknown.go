// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package slo

import "fmt"

// UnknownVerdicts says how an SLO's undecidable verdicts count in its SLI.
// The verdict on the span is the same either way (met absent,
// "<constraint>:unknown" listed): the policy is read where verdicts are
// counted into a ratio (the connector's goodput gauge, the rules, the
// dashboard, the report).
type UnknownVerdicts string

const (
	// UnknownBad counts an unknown verdict as not met: the SLI is
	// met / selected requests. The default: a request nobody can show to be
	// good is not good.
	UnknownBad UnknownVerdicts = "bad"
	// UnknownExclude leaves unknown verdicts out of both sides: the SLI is
	// met / (met + violated), over the decidable requests only, as GuideLLM
	// drops requests it cannot judge.
	UnknownExclude UnknownVerdicts = "exclude"
)

// ParseUnknownVerdicts reads the unknown_verdicts setting; empty is the
// default, UnknownBad.
func ParseUnknownVerdicts(s string) (UnknownVerdicts, error) {
	switch UnknownVerdicts(s) {
	case "", UnknownBad:
		return UnknownBad, nil
	case UnknownExclude:
		return UnknownExclude, nil
	}
	return UnknownBad, fmt.Errorf("%q: allowed values are %q (the default: an undecidable verdict counts as not met) and %q (left out of the SLI: violated / (met + violated))",
		s, UnknownBad, UnknownExclude)
}
