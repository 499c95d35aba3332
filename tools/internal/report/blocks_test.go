// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBlocks: a blocks holds what was added, in order, whether added one
// by one or in slices of any length across block boundaries, and never
// moves a full block.
func TestBlocks(t *testing.T) {
	for _, c := range []struct {
		name  string
		n     int
		slice int // 0: add one by one
	}{
		{"empty", 0, 0},
		{"one", 1, 0},
		{"first block less one", blockLen - 1, 0},
		{"first block", blockLen, 0},
		{"past the first block", blockLen + 1, 0},
		{"three blocks and a bit", 3*blockLen + 5, 0},
		{"slices of 7", 3*blockLen + 5, 7},
		{"slices longer than a block", 3*blockLen + 5, blockLen + 3},
		{"one slice of everything", 3*blockLen + 5, 3*blockLen + 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b blocks[int]
			want := make([]int, c.n)
			for i := range want {
				want[i] = i * 3
			}
			var first *int
			for i := 0; i < c.n; {
				if c.slice == 0 {
					b.add(want[i])
					i++
				} else {
					k := min(c.slice, c.n-i)
					b.addSlice(want[i : i+k])
					i += k
				}
				if first == nil && b.count() >= blockLen {
					first = b.at(0)
				}
			}
			require.Equal(t, c.n, b.count())
			require.Equal(t, want, b.appendTo([]int{}))
			require.Equal(t, want, b.slice())
			for i := range want {
				require.Equal(t, want[i], *b.at(i), "at(%d)", i)
			}
			var got []int
			for i, v := range b.all() {
				require.Equal(t, len(got), i)
				got = append(got, *v)
			}
			require.Equal(t, want, append([]int{}, got...))
			if c.n >= blockLen {
				require.Same(t, first, b.at(0), "the full first block moved")
			}
			for k, blk := range b.list[:max(0, len(b.list)-1)] {
				require.Len(t, blk, blockLen, "block %d", k)
			}
		})
	}
}
