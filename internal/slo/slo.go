// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

// Package slo judges derived request latencies against named, multi-constraint
// SLOs. A request meets an SLO when every constraint holds at once
// (inclusive); a constraint on a value that does not apply holds; a
// constraint on a value that is missing makes the verdict unknown, and an
// unknown is never counted as met.
package slo

import (
	"github.com/llmslo/llmslo/internal/contract"
	"github.com/llmslo/llmslo/internal/derive"
)

// Constraint names, as they appear in violations: internal/contract's.
const (
	TTFT      = contract.ConstraintTTFT
	TPOT      = contract.ConstraintTPOT
	ITL       = contract.ConstraintITL
	E2E       = contract.ConstraintE2E
	QueueTime = contract.ConstraintQueueTime
)

// Threshold is an upper bound in seconds; Set is false when the SLO does not
// constrain the value.
type Threshold struct {
	Seconds float64
	Set     bool
	// Invalid: the request named its own threshold for this constraint
	// but the value could not be read and there is no configured one to
	// fall back to, so the constraint is undecidable.
	Invalid bool
}

// Limits are an SLO's thresholds, one per constraint. ITL bounds the
// request's largest inter-token gap.
type Limits struct {
	TTFT, TPOT, ITL, E2E, QueueTime Threshold
}

// constraint ties a name to its threshold and to the derived value it
// bounds. The list below is the order in which violations are reported.
type constraint struct {
	name, unknown string
	// limit is the constraint's threshold in a Limits: the one place that
	// ties a constraint to its field, which judging, per-request
	// thresholds (perrequest.go) and the configuration (At) all go through.
	limit func(*Limits) *Threshold
	value func(*derive.Result) derive.Value
	// cause is the rule that names why the constraint failed
	// (attribution.go).
	cause causeRule
}

var constraints = [...]constraint{
	{TTFT, TTFT + contract.UnknownSuffix, func(l *Limits) *Threshold { return &l.TTFT }, func(r *derive.Result) derive.Value { return r.TTFT }, ttftMiss},
	{TPOT, TPOT + contract.UnknownSuffix, func(l *Limits) *Threshold { return &l.TPOT }, func(r *derive.Result) derive.Value { return r.TPOT }, paceMiss},
	{ITL, ITL + contract.UnknownSuffix, func(l *Limits) *Threshold { return &l.ITL }, func(r *derive.Result) derive.Value { return r.ITLMax }, paceMiss},
	{E2E, E2E + contract.UnknownSuffix, func(l *Limits) *Threshold { return &l.E2E }, func(r *derive.Result) derive.Value { return r.E2E }, e2eMiss},
	{QueueTime, QueueTime + contract.UnknownSuffix, func(l *Limits) *Threshold { return &l.QueueTime }, func(r *derive.Result) derive.Value { return r.QueueTime }, queueMiss},
}

// The table has a row per contract constraint, and the verdict's bit sets
// hold them all: a constraint added to the contract, or a row added here,
// fails to compile until both agree (a negative or out-of-range constant
// index), rather than being judged by some readers and skipped by others.
var (
	_ = [1]struct{}{}[len(constraints)-contract.NumConstraints]
	_ = [1]struct{}{}[contract.NumConstraints-len(constraints)]
	_ [8 - contract.NumConstraints]struct{} // Verdict.Unknown, Violated: uint8
)

// At returns a pointer to the threshold of constraint i (in the order of
// Names) in l, so a caller can fill Limits in constraint order without
// repeating the field list; i must be below contract.NumConstraints.
func (l *Limits) At(i int) *Threshold { return constraints[i].limit(l) }

// SLO is one compiled objective.
type SLO struct {
	Name     string
	Limits   Limits
	Selector Selector
	// From, when not nil, reads per-request thresholds from span
	// attributes (perrequest.go); nil costs nothing per span.
	From *Sources
	// QualifiedTTFTUnknown takes a qualified TTFT (derive.Result.
	// TTFTQualified), and the TPOT from it, as unknown (qualified_ttft).
	QualifiedTTFTUnknown bool
}

// New builds an SLO.
func New(name string, limits Limits, sel Selector) *SLO {
	return &SLO{Name: name, Limits: limits, Selector: sel}
}

// Verdict is the outcome of one SLO for one request.
type Verdict struct {
	// Decided is false when the verdict is unknown: some constraint could not
	// be evaluated and none failed.
	Decided bool
	Met     bool
	// Violations lists the failed constraints ("error" first for a failed
	// request), then the undecidable ones as "<constraint>:unknown".
	Violations []string
	// Unknown has bit i set when constraint i (in the order of Names) is
	// listed as undecidable: a set without reading the strings back; it has
	// contract.NumConstraints bits.
	Unknown uint8
	// Violated has bit i set when constraint i failed (is listed by name).
	Violated uint8
	// Causes, set by Attribute, lists "<constraint>:<cause>" for each
	// failed constraint, in the order of Violations; empty when none failed.
	Causes []string
}

// Judge evaluates the SLO on r, appending violations to v.Violations[:0].
// A request whose span has error status is never good; its other failed
// constraints are still listed, so "why" stays visible.
func (s *SLO) Judge(r *derive.Result, v *Verdict) { s.JudgeLimits(r, &s.Limits, v) }

// JudgeLimits is Judge against limits l, the SLO's own or a request's
// (LimitsFor).
func (s *SLO) JudgeLimits(r *derive.Result, l *Limits, v *Verdict) {
	v.Violations, v.Unknown, v.Violated, v.Causes = v.Violations[:0], 0, 0, v.Causes[:0]
	if r.Failed {
		v.Violations = append(v.Violations, contract.ViolationError)
	}
	unknown, hides := false, s.hidesQualified(r)
	for i := range constraints {
		c := &constraints[i]
		lim := c.limit(l)
		if !lim.Set {
			continue
		}
		if lim.Invalid {
			unknown = true
			continue
		}
		x := c.value(r)
		if hides {
			x = hideQualified(i, x)
		}
		switch x.S {
		case derive.Known:
			if x.V > lim.Seconds {
				v.Violations = append(v.Violations, c.name)
				v.Violated |= 1 << i
			}
		case derive.Missing:
			unknown = true
		}
	}
	failed := len(v.Violations) > 0
	if unknown && !r.Failed {
		for i := range constraints {
			c := &constraints[i]
			if lim := c.limit(l); lim.Set && (lim.Invalid || s.value(i, r).S == derive.Missing) {
				v.Violations = append(v.Violations, c.unknown)
				v.Unknown |= 1 << i
			}
		}
	}
	v.Decided = failed || !unknown
	v.Met = !failed && !unknown
}

// value is the value constraint i judges on r: a qualified TTFT, and the
// TPOT from it, are missing to an SLO that takes them as unknown.
func (s *SLO) value(i int, r *derive.Result) derive.Value {
	x := constraints[i].value(r)
	if s.hidesQualified(r) {
		x = hideQualified(i, x)
	}
	return x
}

// hidesQualified reports whether the SLO takes r's TTFT, and the TPOT from
// it, as unknown: it is qualified, and the SLO says qualified_ttft:
// unknown.
func (s *SLO) hidesQualified(r *derive.Result) bool {
	return s.QualifiedTTFTUnknown && r.TTFTQualified
}

// hideQualified is x, constraint i's value, as an SLO that hides a
// qualified TTFT judges it: missing for a known TTFT or TPOT.
func hideQualified(i int, x derive.Value) derive.Value {
	if x.S == derive.Known && (constraints[i].name == TTFT || constraints[i].name == TPOT) {
		return derive.Value{}
	}
	return x
}

// Names lists the constraint names in the order violations report them.
func Names() []string {
	out := make([]string, len(constraints))
	for i, c := range constraints {
		out[i] = c.name
	}
	return out
}

// Ordered returns l's thresholds in the order of Names.
func (l *Limits) Ordered() []Threshold {
	out := make([]Threshold, len(constraints))
	for i, c := range constraints {
		out[i] = *c.limit(l)
	}
	return out
}
