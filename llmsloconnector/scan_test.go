// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/llmslo/llmslo/internal/contract"
)

// TestReadGaps: a gap is kept only when it is a double in [0, a week]; a
// zero of another type (Double() reads 0 for every non-double) is
// rejected like any other wrongly typed entry, and the weights of kept
// gaps stay paired with them.
func TestReadGaps(t *testing.T) {
	gaps := pcommon.NewValueSlice()
	weights := pcommon.NewValueSlice()
	for _, put := range []func(pcommon.Value){
		func(v pcommon.Value) { v.SetDouble(0.02) },
		func(v pcommon.Value) { v.SetDouble(0) },
		func(v pcommon.Value) { v.SetInt(0) },
		func(v pcommon.Value) { v.SetStr("0.02") },
		func(pcommon.Value) {}, // empty
		func(v pcommon.Value) { v.SetDouble(math.NaN()) },
		func(v pcommon.Value) { v.SetDouble(-0.01) },
		func(v pcommon.Value) { v.SetDouble(contract.MaxSeconds) },
		func(v pcommon.Value) { v.SetDouble(contract.MaxSeconds * 1.01) },
		func(v pcommon.Value) { v.SetDouble(math.Inf(1)) },
		func(v pcommon.Value) { v.SetBool(true) },
		func(v pcommon.Value) { v.SetDouble(math.Copysign(0, -1)) },
		func(v pcommon.Value) { v.SetDouble(math.SmallestNonzeroFloat64) },
		func(v pcommon.Value) { v.SetDouble(math.Inf(-1)) },
	} {
		put(gaps.Slice().AppendEmpty())
		weights.Slice().AppendEmpty().SetInt(int64(gaps.Slice().Len()))
	}
	var o observation
	readGaps(&spanFields{gaps: gaps, hasGaps: true}, &o)
	assert.Equal(t, []float64{0.02, 0, contract.MaxSeconds, 0, math.SmallestNonzeroFloat64}, o.gaps)
	assert.Equal(t, uint64(1<<63), math.Float64bits(o.gaps[3]), "-0 is kept as it is")
	assert.Empty(t, o.weights)
	assert.Equal(t, 9, o.rejected)

	o = observation{}
	readGaps(&spanFields{gaps: gaps, hasGaps: true, weights: weights, hasWeights: true}, &o)
	assert.Equal(t, []float64{0.02, 0, contract.MaxSeconds, 0, math.SmallestNonzeroFloat64}, o.gaps)
	assert.Equal(t, []uint64{1, 2, 8, 12, 13}, o.weights)
	assert.Equal(t, 9, o.rejected)
}

// TestNumber: doubles and ints, zeros included, read as numbers; every
// other type, including the zero values other types read as, does not.
func TestNumber(t *testing.T) {
	for _, tc := range []struct {
		name string
		put  func(pcommon.Value)
		want float64
		ok   bool
	}{
		{"double", func(v pcommon.Value) { v.SetDouble(0.25) }, 0.25, true},
		{"double zero", func(v pcommon.Value) { v.SetDouble(0) }, 0, true},
		{"negative double", func(v pcommon.Value) { v.SetDouble(-2) }, -2, true},
		{"int", func(v pcommon.Value) { v.SetInt(512) }, 512, true},
		{"int zero", func(v pcommon.Value) { v.SetInt(0) }, 0, true},
		{"string", func(v pcommon.Value) { v.SetStr("512") }, 0, false},
		{"empty string", func(v pcommon.Value) { v.SetStr("") }, 0, false},
		{"bool", func(v pcommon.Value) { v.SetBool(false) }, 0, false},
		{"slice", func(v pcommon.Value) { v.SetEmptySlice() }, 0, false},
		{"empty", func(pcommon.Value) {}, 0, false},
	} {
		v := pcommon.NewValueEmpty()
		tc.put(v)
		got, ok := number(v)
		assert.Equal(t, tc.want, got, tc.name)
		assert.Equal(t, tc.ok, ok, tc.name)
	}
	nan, ok := number(pcommon.NewValueDouble(math.NaN()))
	assert.True(t, ok)
	assert.True(t, math.IsNaN(nan), "a NaN is a double; observation.set rejects it")
}

// TestKeyLengths: a key may be one scanOther reads only if its length is
// one of theirs; keys of 64 bytes or more are always looked at.
func TestKeyLengths(t *testing.T) {
	long := strings.Repeat("k", 70)
	set := lengthsOf("gen_ai.system", long)
	assert.True(t, set.mayHold("gen_ai.system"))
	assert.True(t, set.mayHold("abcdefghijklm"), "same length: scanOther decides")
	assert.False(t, set.mayHold("gen_ai.request.id"))
	assert.False(t, set.mayHold(""))
	assert.True(t, set.mayHold(strings.Repeat("x", 64)))
	assert.True(t, set.mayHold(strings.Repeat("x", 63+70)))
}
