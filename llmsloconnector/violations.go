// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
	"math/bits"

	"go.opentelemetry.io/collector/pdata/pcommon"

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

// violationSet is a set of violationNames indexes, one bit each.
type violationSet uint32

// constraintSet is a set of contract.Constraints indexes, one bit each.
type constraintSet uint8

// maxViolationNames bounds violationNames: the counters of one SLO hold
// one slot per name.
const maxViolationNames = 16

func init() {
	if len(violationNames) > maxViolationNames {
		panic("more constraint names than sloCounts.violations holds")
	}
	if contract.NumConstraints > 8 {
		panic("more constraints than a constraintSet holds")
	}
	for k, name := range contract.Constraints {
		if violationNames[firstConstraint+k] != name {
			panic("violationNames does not list the constraints from firstConstraint")
		}
	}
}

// violationIndex returns the index of name in violationNames.
func violationIndex(name string) (int, bool) {
	for i, v := range violationNames {
		if v == name {
			return i, true
		}
	}
	return 0, false
}

// constraints are the constraints the set says failed (not error, not
// :unknown).
func (v violationSet) constraints() constraintSet {
	return constraintSet(v>>firstConstraint) & (1<<contract.NumConstraints - 1)
}

// readCauses reads an llm.slo.<name>.causes value into so: one cause per
// constraint, from the closed vocabulary (contract.ParseCauseEntry, which
// does not allocate). A malformed entry, a cause outside the set, or a
// second cause for one constraint is a rejected value, so no span can add a
// series by writing a new word.
func readCauses(v pcommon.Value, so *sloObservation, o *observation) {
	if v.Type() != pcommon.ValueTypeSlice {
		o.rejected++
		return
	}
	for _, e := range v.Slice().All() {
		k, c, ok := contract.ParseCauseEntry(e.Str())
		if !ok || so.caused&(1<<k) != 0 {
			o.rejected++
			continue
		}
		so.causes[k], so.caused = c, so.caused|1<<k
	}
}

// matchCauses keeps the causes of the constraints the violations list as
// failed and returns how many it dropped: a cause of a constraint that did
// not fail cannot come from the processor.
func (so *sloObservation) matchCauses() int {
	stray := so.caused &^ so.violations.constraints()
	so.caused &^= stray
	return bits.OnesCount8(uint8(stray))
}

// addViolations counts one span's violations, standing for n requests: a
// failed constraint whose cause the span named under that cause, every
// other entry under its name alone.
func (sc *sloCounts) addViolations(so *sloObservation, n uint64) {
	for v := so.violations; v != 0; v &= v - 1 {
		i := bits.TrailingZeros32(uint32(v))
		if k := i - firstConstraint; k >= 0 && k < contract.NumConstraints && so.caused&(1<<k) != 0 {
			sc.causes[k][so.causes[k]] += n
			continue
		}
		sc.violations[i] += n
	}
}

// emitViolations writes the SLO's llm.slo.violations points: per
// violation name the count without a cause, then for a constraint its
// count by cause (llm.slo.cause).
func emitViolations(b *builder, s *series, sc *sloCounts, ts pcommon.Timestamp, name string) {
	for v, constraint := range violationNames {
		if sc.violations[v] > 0 {
			emitCount(b, s, metricSLOViolations, &sc.violations[v], ts, attrSLOName, name, attrSLOConstraint, constraint)
		}
		k := v - firstConstraint
		if k < 0 || k >= contract.NumConstraints {
			continue
		}
		for c := range contract.NumCauses {
			if sc.causes[k][c] > 0 {
				emitCount(b, s, metricSLOViolations, &sc.causes[k][c], ts, attrSLOName, name, attrSLOConstraint, constraint, attrSLOCause, c.String())
			}
		}
	}
}
