// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/llmslo/llmslo/internal/contract"
)

// gapList reads llm.itl.gaps or llm.itl.gap_weights in either form the
// processor has written: packed bytes (contract.AppendGaps), or the slice
// of one value per gap of files recorded by earlier builds.
type gapList struct {
	packed   pcommon.ByteSlice
	slice    pcommon.Slice
	n        int
	isPacked bool
}

// gapListOf reads v as a list of elements of elemBytes each when packed;
// false when v is neither form or its length is not whole elements.
func gapListOf(v pcommon.Value, elemBytes int) (gapList, bool) {
	switch v.Type() {
	case pcommon.ValueTypeBytes:
		b := v.Bytes()
		if b.Len()%elemBytes != 0 {
			return gapList{}, false
		}
		return gapList{packed: b, n: b.Len() / elemBytes, isPacked: true}, true
	case pcommon.ValueTypeSlice:
		s := v.Slice()
		return gapList{slice: s, n: s.Len()}, true
	}
	return gapList{}, false
}

// gap is the i-th gap in seconds, NaN for a value that is not a number.
func (l gapList) gap(i int) float64 {
	if l.isPacked {
		return contract.GapAt(l.packed, i)
	}
	return seconds(l.slice.At(i))
}

// weight is the i-th weight, 0 for a value that is not an int.
func (l gapList) weight(i int) int64 {
	if l.isPacked {
		return contract.WeightAt(l.packed, i)
	}
	return l.slice.At(i).Int()
}
