// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package slo

// Definition is what a reader of verdicts needs of a configured SLO (the
// offline report judges the processor's values again, per constraint):
// its name, its configured thresholds and its unknown_verdicts policy.
type Definition struct {
	Name   string
	Limits Limits
	// ExcludeUnknown: goodput is over the decidable requests only
	// (unknown_verdicts: exclude).
	ExcludeUnknown bool
}
