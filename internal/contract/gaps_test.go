// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package contract

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

func packed(b []byte) pcommon.Value {
	v := pcommon.NewValueEmpty()
	v.SetEmptyBytes().FromRaw(b)
	return v
}

// TestPackedGapsRoundTrip: every double comes back bit for bit, including
// the values readers reject (they judge, the codec does not).
func TestPackedGapsRoundTrip(t *testing.T) {
	gaps := []float64{0.02, 0, math.Copysign(0, -1), 1e-9, MaxSeconds, math.NaN(), math.Inf(-1), -0.5}
	b := AppendGaps(nil, gaps)
	require.Len(t, b, len(gaps)*GapBytes)
	got, ok := GapsOf(packed(b))
	require.True(t, ok)
	for i := range gaps {
		assert.Equal(t, math.Float64bits(gaps[i]), math.Float64bits(got[i]), "gap %d", i)
	}
	// Little-endian IEEE-754: 0.02 is 0x3F947AE147AE147B.
	assert.Equal(t, []byte{0x7b, 0x14, 0xae, 0x47, 0xe1, 0x7a, 0x94, 0x3f}, b[:8])
}

func TestPackedWeights(t *testing.T) {
	tests := []struct {
		name string
		in   []int64
		want []int64
	}{
		{"in range", []int64{1, 2, MaxTokens}, []int64{1, 2, MaxTokens}},
		{"out of range becomes one past the bound", []int64{0, -3, MaxTokens + 1, 1 << 40}, []int64{MaxTokens + 1, MaxTokens + 1, MaxTokens + 1, MaxTokens + 1}},
		{"none", nil, []int64{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := AppendGapWeights(nil, tt.in)
			require.Len(t, b, len(tt.in)*WeightBytes)
			got, ok := WeightsOf(packed(b))
			require.True(t, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestGapsOfForms(t *testing.T) {
	slice := pcommon.NewValueEmpty()
	s := slice.SetEmptySlice()
	s.AppendEmpty().SetDouble(0.25)
	s.AppendEmpty().SetDouble(0.5)
	got, ok := GapsOf(slice)
	require.True(t, ok)
	assert.Equal(t, []float64{0.25, 0.5}, got)

	_, ok = GapsOf(packed(make([]byte, 9)))
	assert.False(t, ok, "9 bytes are not whole gaps")
	_, ok = WeightsOf(packed(make([]byte, 6)))
	assert.False(t, ok, "6 bytes are not whole weights")
	_, ok = GapsOf(pcommon.NewValueDouble(0.1))
	assert.False(t, ok, "a double is neither form")
}
