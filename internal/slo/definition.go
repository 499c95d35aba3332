// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package slo

import "time"

// Definition is what a reader of verdicts needs of a configured SLO: the
// offline report judges the processor's values again, per constraint; the
// rules and the dashboard turn its objective into recording rules and
// alerts. The processor's configuration builds it, so neither reader
// depends on the processor.
type Definition struct {
	Name   string
	Limits Limits
	// ExcludeUnknown: goodput is over the decidable requests only
	// (unknown_verdicts: exclude).
	ExcludeUnknown bool
	// Objective is the share of selected requests that must meet the SLO,
	// in percent; 0 when none is configured (the configuration refuses an
	// objective below 1).
	Objective float64
	// Period is the objective's compliance window.
	Period time.Duration
	// Bounds are the configured thresholds as written, in constraint
	// order: descriptions show the configured spelling ("500ms"), which
	// Limits, in seconds, no longer has.
	Bounds []Bound
	// Selection says which requests the selector selects, "" for every
	// request ("layer server; models m1, m2").
	Selection string
	// Layer is the selector's layer, "" for both.
	Layer string
}

// Bound is one configured threshold: the constraint's name (TTFT, ...,
// QueueTime) and its bound.
type Bound struct {
	Constraint string
	Max        time.Duration
}
