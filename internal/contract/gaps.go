// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package contract

import (
	"encoding/binary"
	"math"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// The packed form of llm.itl.gaps and llm.itl.gap_weights: one bytes
// attribute each instead of a slice of one value per gap. pdata allocates
// every element of a slice attribute on its own, so a list of gaps cost
// one allocation per gap on the processor's write and one value read per
// gap on the connector's; packed, each list is one allocation and one
// contiguous read. The values are exactly the slice form's: a gap is the
// IEEE-754 double of its seconds (bit for bit), a weight the token count.
// Readers also take the slice form that earlier builds wrote: OTLP files
// recorded before, a first-tier collector not yet upgraded.
const (
	// GapBytes is the size of one packed gap: a little-endian float64.
	GapBytes = 8
	// WeightBytes is the size of one packed weight: a little-endian
	// uint32 (weights are at most MaxTokens, 2^24).
	WeightBytes = 4
)

// AppendGaps appends the packed form of gaps to dst.
func AppendGaps(dst []byte, gaps []float64) []byte {
	for _, g := range gaps {
		dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(g))
	}
	return dst
}

// AppendGapWeights appends the packed form of weights to dst. A weight
// outside [1, MaxTokens] is the caller's bug, written as MaxTokens+1 so
// that readers reject it with the list rather than read another number.
func AppendGapWeights(dst []byte, weights []int64) []byte {
	for _, w := range weights {
		if w < 1 || w > MaxTokens {
			w = MaxTokens + 1
		}
		dst = binary.LittleEndian.AppendUint32(dst, uint32(w))
	}
	return dst
}

// GapCount is the number of gaps in a packed list, false when its length
// is not a whole number of gaps (a corrupt attribute).
func GapCount(packed pcommon.ByteSlice) (int, bool) {
	n := packed.Len()
	return n / GapBytes, n%GapBytes == 0
}

// GapAt is the i-th gap of a packed list (i < GapCount). ByteSlice has no
// view of its bytes that does not copy them, so it reads them one by one.
func GapAt(packed pcommon.ByteSlice, i int) float64 {
	o := i * GapBytes
	_ = packed.At(o + 7)
	u := uint64(packed.At(o)) | uint64(packed.At(o+1))<<8 | uint64(packed.At(o+2))<<16 |
		uint64(packed.At(o+3))<<24 | uint64(packed.At(o+4))<<32 | uint64(packed.At(o+5))<<40 |
		uint64(packed.At(o+6))<<48 | uint64(packed.At(o+7))<<56
	return math.Float64frombits(u)
}

// WeightCount is the number of weights in a packed list, false when its
// length is not a whole number of weights.
func WeightCount(packed pcommon.ByteSlice) (int, bool) {
	n := packed.Len()
	return n / WeightBytes, n%WeightBytes == 0
}

// WeightAt is the i-th weight of a packed list (i < WeightCount).
func WeightAt(packed pcommon.ByteSlice, i int) int64 {
	o := i * WeightBytes
	_ = packed.At(o + 3)
	return int64(uint32(packed.At(o)) | uint32(packed.At(o+1))<<8 | uint32(packed.At(o+2))<<16 | uint32(packed.At(o+3))<<24)
}

// GapsOf decodes llm.itl.gaps in either form, for tests and tools that
// want the values whole (the hot readers index the attribute in place);
// false when v is neither form or not whole gaps.
func GapsOf(v pcommon.Value) ([]float64, bool) {
	return decodeList(v, GapBytes, GapAt, pcommon.Value.Double)
}

// WeightsOf decodes llm.itl.gap_weights in either form, as GapsOf.
func WeightsOf(v pcommon.Value) ([]int64, bool) {
	return decodeList(v, WeightBytes, WeightAt, pcommon.Value.Int)
}

// decodeList is GapsOf and WeightsOf: packed elements of elemBytes each,
// read with at, or a slice whose values elem reads.
func decodeList[T any](v pcommon.Value, elemBytes int, at func(pcommon.ByteSlice, int) T, elem func(pcommon.Value) T) ([]T, bool) {
	switch v.Type() {
	case pcommon.ValueTypeBytes:
		b := v.Bytes()
		if b.Len()%elemBytes != 0 {
			return nil, false
		}
		out := make([]T, b.Len()/elemBytes)
		for i := range out {
			out[i] = at(b, i)
		}
		return out, true
	case pcommon.ValueTypeSlice:
		out := make([]T, 0, v.Slice().Len())
		for _, e := range v.Slice().All() {
			out = append(out, elem(e))
		}
		return out, true
	}
	return nil, false
}
