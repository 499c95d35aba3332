// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package series

import (
	"math/bits"
	"time"

	"github.com/llmslo/llmslo/internal/aggregate"
	"github.com/llmslo/llmslo/internal/contract"
)

// violationNames is the closed vocabulary of llm.slo.constraint values: a
// failed request, each constraint, and each constraint undecidable. A
// violations entry outside it is not counted (it cannot come from the
// processor), so no span can add a series by writing a new word.
var violationNames = func() []string {
	constraints := contract.Constraints[:]
	names := []string{contract.ViolationError}
	names = append(names, constraints...)
	for _, c := range constraints {
		names = append(names, c+contract.UnknownSuffix)
	}
	return names
}()

// firstConstraint is the violationNames index of contract.Constraints[0]:
// constraint k is violationNames[firstConstraint+k].
const firstConstraint = 1

// ViolationSet is a set of violationNames indexes, one bit each.
type ViolationSet uint32

// ConstraintSet is a set of contract.Constraints indexes, one bit each.
type ConstraintSet uint8

// maxViolationNames bounds violationNames: the counters of one SLO hold
// one slot per name.
const maxViolationNames = 16

func init() {
	if len(violationNames) > maxViolationNames {
		panic("more constraint names than sloCounts.violations holds")
	}
	if contract.NumConstraints > 8 {
		panic("more constraints than a ConstraintSet holds")
	}
	for k, name := range contract.Constraints {
		if violationNames[firstConstraint+k] != name {
			panic("violationNames does not list the constraints from firstConstraint")
		}
	}
}

// ViolationIndex returns the index of name in violationNames.
func ViolationIndex(name string) (int, bool) {
	for i, v := range violationNames {
		if v == name {
			return i, true
		}
	}
	return 0, false
}

// Constraints are the constraints the set says failed (not error, not
// :unknown).
func (v ViolationSet) Constraints() ConstraintSet {
	return ConstraintSet(v>>firstConstraint) & (1<<contract.NumConstraints - 1)
}

// Verdict is one span's verdict of one SLO.
type Verdict struct {
	Decided, Met bool
	Violations   ViolationSet
	// Causes[k] is the cause of constraint k, for k in Caused.
	Causes [contract.NumConstraints]contract.Cause
	Caused ConstraintSet
}

// sloCounts are one SLO's counters in one series: a single allocation.
type sloCounts struct {
	selected, met, violated, unknown, tokensMet uint64
	// weighted counts the requests of selected that came from spans
	// standing for more than one request; weightedSpans those spans.
	weighted, weightedSpans uint64
	violations              [maxViolationNames]uint64 // by violationNames index, without a cause
	// causes[k][c] counts the violations of constraint k for cause c.
	causes  [contract.NumConstraints][contract.NumCauses]uint64
	goodput aggregate.Ratio
	// excludeUnknown leaves unknown verdicts out of goodput: met / (met +
	// violated), the SLO's unknown_verdicts: exclude. The counters count
	// every verdict either way.
	excludeUnknown bool
}

// add counts one span standing for n requests.
func (sc *sloCounts) add(v *Verdict, tokens uint64, now time.Time, n uint64) {
	sc.selected += n
	switch {
	case !v.Decided:
		sc.unknown += n
	case v.Met:
		sc.met += n
		sc.tokensMet += aggregate.MulSat(tokens, n)
	default:
		sc.violated += n
	}
	if v.Decided || !sc.excludeUnknown {
		sc.goodput.AddN(now, v.Decided && v.Met, n)
	}
	sc.addViolations(v, n)
}

// addViolations counts one span's violations, standing for n requests: a
// failed constraint whose cause the span named under that cause, every
// other entry under its name alone.
func (sc *sloCounts) addViolations(v *Verdict, n uint64) {
	for set := v.Violations; set != 0; set &= set - 1 {
		i := bits.TrailingZeros32(uint32(set))
		if k := i - firstConstraint; k >= 0 && k < contract.NumConstraints && v.Caused&(1<<k) != 0 {
			sc.causes[k][v.Causes[k]] += n
			continue
		}
		sc.violations[i] += n
	}
}
