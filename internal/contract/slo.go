// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package contract

// The bounds beyond which a finite value is taken as corrupt rather than
// real: the processor's derivation applies them to every value it reads or
// computes, and the connector to what it reads from a span, so the two
// always agree on what a value is.
const (
	// MaxSeconds bounds every duration: no LLM request runs for a week.
	MaxSeconds = 7 * 24 * 3600
	// MaxTokens bounds every token count (2^24, 16.7 M): far above any
	// model's output limit, far below a counter gone wrong.
	MaxTokens = 1 << 24
)

// The SLO constraints, by the names that violations
// (llm.slo.<name>.violations), the llm.slo.constraint metric attribute, the
// configuration and llmslo's --slo flag use.
const (
	ConstraintTTFT      = "ttft"
	ConstraintTPOT      = "tpot"
	ConstraintITL       = "itl"
	ConstraintE2E       = "e2e"
	ConstraintQueueTime = "queue_time"
)

// Constraints lists them in the order violations report them, which is also
// the order of internal/slo's table and of the report's verdict bits.
// Adding one: see CONTRIBUTING.md, "Add an SLO constraint".
var Constraints = [...]string{ConstraintTTFT, ConstraintTPOT, ConstraintITL, ConstraintE2E, ConstraintQueueTime}

// NumConstraints is the number of SLO constraints.
const NumConstraints = len(Constraints)
