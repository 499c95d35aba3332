// Package slo judges derived request latencies against named, multi-constraint
// SLOs. A request meets an SLO when every constraint holds at once
// (inclusive); a constraint on a value that does not apply holds; a
// constraint on a value that is missing makes the verdict unknown, and an
// unknown is never counted as met.
package slo

import (
	"github.com/llmslo/llmslo/internal/derive"
)

// Constraint names, as they appear in violations.
const (
	TTFT      = "ttft"
	TPOT      = "tpot"
	ITL       = "itl"
	E2E       = "e2e"
	QueueTime = "queue_time"
	Error     = "error"
)

// Constraints lists the constraint names in the order violations report them.
var Constraints = []string{TTFT, TPOT, ITL, E2E, QueueTime}

// Threshold is an upper bound in seconds; Set is false when the SLO does not
// constrain the value.
type Threshold struct {
	Seconds float64
	Set     bool
}

// SLO is one compiled objective.
type SLO struct {
	Name string
	// Thresholds by constraint, in the order of Constraints.
	Limits   [5]Threshold
	Selector Selector
	// violations holds the precomputed strings so judging does not allocate.
	unknown [5]string
}

// New builds an SLO. limits are in the order of Constraints.
func New(name string, limits [5]Threshold, sel Selector) *SLO {
	s := &SLO{Name: name, Limits: limits, Selector: sel}
	for i, c := range Constraints {
		s.unknown[i] = c + ":unknown"
	}
	return s
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
}

func values(r *derive.Result) [5]derive.Value {
	return [5]derive.Value{r.TTFT, r.TPOT, r.ITLMax, r.E2E, r.QueueTime}
}

// Judge evaluates the SLO on r, appending violations to v.Violations[:0].
// A request whose span has error status is never good; its other failed
// constraints are still listed, so "why" stays visible.
func (s *SLO) Judge(r *derive.Result, v *Verdict) {
	v.Violations = v.Violations[:0]
	if r.Failed {
		v.Violations = append(v.Violations, Error)
	}
	vals := values(r)
	unknown := false
	for i, lim := range s.Limits {
		if !lim.Set {
			continue
		}
		switch x := vals[i]; x.S {
		case derive.Known:
			if x.V > lim.Seconds {
				v.Violations = append(v.Violations, Constraints[i])
			}
		case derive.Missing:
			unknown = true
		}
	}
	failed := len(v.Violations) > 0
	if unknown && !r.Failed {
		for i, lim := range s.Limits {
			if lim.Set && vals[i].S == derive.Missing {
				v.Violations = append(v.Violations, s.unknown[i])
			}
		}
	}
	v.Decided = failed || !unknown
	v.Met = !failed && !unknown
}
