// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
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

// violationSet is a set of violationNames indexes, one bit each.
type violationSet uint32

// maxViolationNames bounds violationNames: the counters of one SLO hold
// one slot per name.
const maxViolationNames = 16

func init() {
	if len(violationNames) > maxViolationNames {
		panic("more constraint names than sloCounts.violations holds")
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
