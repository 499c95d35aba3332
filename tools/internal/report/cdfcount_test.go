// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestZeros: a CDF counts its values at 0 over all of them, before
// thinning (the plot's "at 0 ms not drawn" counted the thinned points:
// 918 where 2,082 requests had 0).
func TestZeros(t *testing.T) {
	many := make([]float64, 3000)
	for i := 2082; i < len(many); i++ {
		many[i] = float64(i)
	}
	for _, tt := range []struct {
		sorted []float64
		want   int64
	}{
		{nil, 0},
		{[]float64{0.1, 0.2}, 0},
		{[]float64{0, 0, 0.2}, 2},
		{[]float64{math.NaN(), 0, 0.5}, 1},
		{[]float64{-1, 0}, 2},
		{many, 2082},
	} {
		assert.Equal(t, tt.want, zeros(tt.sorted), "%v", len(tt.sorted))
	}
	assert.Equal(t, 400, len(thin(many, cdfPoints)))
	assert.NotEqual(t, int64(2082), zeros(thin(many, cdfPoints)), "the thinned sample miscounts")
}
