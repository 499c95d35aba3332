// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
	"math/bits"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/llmslo/llmslo/internal/contract"
	"github.com/llmslo/llmslo/llmsloconnector/internal/series"
)

// The closed vocabulary of llm.slo.constraint values is the series
// package's, which counts them; a span's violations and causes are read
// here.
type (
	// violationSet is a set of indexes in that vocabulary.
	violationSet = series.ViolationSet
	// constraintSet is a set of contract.Constraints indexes.
	constraintSet = series.ConstraintSet
)

// violationIndex returns the index of name in the vocabulary.
func violationIndex(name string) (int, bool) { return series.ViolationIndex(name) }

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
	stray := so.caused &^ so.violations.Constraints()
	so.caused &^= stray
	return bits.OnesCount8(uint8(stray))
}

// verdict is what the series counts of so.
func (so *sloObservation) verdict() series.Verdict {
	return series.Verdict{Decided: so.decided, Met: so.met, Violations: so.violations, Causes: so.causes, Caused: so.caused}
}
