// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package report

import "iter"

// blockShift sizes the blocks of a blocks: 8,192 elements (a record's
// block is 576 KiB).
const blockShift = 13

const (
	blockLen  = 1 << blockShift
	blockMask = blockLen - 1
)

// blocks is an append-only sequence kept in blocks of blockLen elements.
// A slice of millions of records grows by a quarter at a time (the
// runtime's factor for large slices), copying everything it holds into
// fresh, zeroed memory each time: about four times the final size in
// allocations, made by the one goroutine that applies requests in order,
// and a first touch of every fresh page (slow on some virtual machines:
// BenchmarkFreshPages in bench/). A block, once full, is never copied. The first block grows as a slice does, so a small
// report stays small.
type blocks[T any] struct {
	list [][]T // every block but the last holds blockLen elements
	n    int
}

// count is the number of elements added.
func (b *blocks[T]) count() int { return b.n }

// at is the i-th element added, 0 <= i < count().
func (b *blocks[T]) at(i int) *T { return &b.list[i>>blockShift][i&blockMask] }

// add puts v at the end.
func (b *blocks[T]) add(v T) {
	blk := b.tail()
	*blk = append(*blk, v)
	b.n++
}

// addSlice puts vs at the end, in order.
func (b *blocks[T]) addSlice(vs []T) {
	for len(vs) > 0 {
		blk := b.tail()
		k := min(len(vs), blockLen-len(*blk))
		*blk = append(*blk, vs[:k]...)
		b.n += k
		vs = vs[k:]
	}
}

// tail is the last block, a new one when that is full.
func (b *blocks[T]) tail() *[]T {
	if len(b.list) == 0 || len(b.list[len(b.list)-1]) == blockLen {
		size := blockLen
		if len(b.list) == 0 {
			size = 0 // the first block grows as a slice does
		}
		b.list = append(b.list, make([]T, 0, size))
	}
	return &b.list[len(b.list)-1]
}

// all yields every element with its index, in order.
func (b *blocks[T]) all() iter.Seq2[int, *T] {
	return func(yield func(int, *T) bool) {
		i := 0
		for _, blk := range b.list {
			for k := range blk {
				if !yield(i, &blk[k]) {
					return
				}
				i++
			}
		}
	}
}

// slice is a copy of every element, in order, in one slice.
func (b *blocks[T]) slice() []T { return b.appendTo(make([]T, 0, b.n)) }

// appendTo appends every element to dst, in order.
func (b *blocks[T]) appendTo(dst []T) []T {
	for _, blk := range b.list {
		dst = append(dst, blk...)
	}
	return dst
}
