// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package aggregate

import (
	"encoding/binary"
	"math"
)

// The sketch's counters start one byte wide and widen, all together, the
// first time a count would not fit: most buckets of a ten-second sub-window
// hold a handful of values, and four-byte counters would spend three bytes
// of every four on zeros. A count that would pass 2^32 - 1 (billions of
// values in one bucket of one sub-window) saturates.

// buckets is the number of counters; width/2 is log2(width) for 1, 2, 4.
func (s *Sketch) buckets() int { return len(s.counts) >> (s.width / 2) }

// at is the count of bucket offset+j.
func (s *Sketch) at(j int) uint64 {
	switch s.width {
	case 1:
		return uint64(s.counts[j])
	case 2:
		return uint64(binary.LittleEndian.Uint16(s.counts[2*j:]))
	default:
		return uint64(binary.LittleEndian.Uint32(s.counts[4*j:]))
	}
}

func (s *Sketch) put(j int, n uint64) {
	switch s.width {
	case 1:
		s.counts[j] = uint8(n)
	case 2:
		binary.LittleEndian.PutUint16(s.counts[2*j:], uint16(n))
	default:
		binary.LittleEndian.PutUint32(s.counts[4*j:], uint32(n))
	}
}

// inc adds n to bucket i, growing the range or the counter width first
// when needed.
func (s *Sketch) inc(i int32, n uint64) {
	// The common case: a counter in range that does not overflow.
	if j := uint(i - s.offset); j < uint(s.buckets()) {
		switch s.width {
		case 1:
			if sum := uint64(s.counts[j]) + n; sum <= math.MaxUint8 {
				s.counts[j] = uint8(sum)
				return
			}
		case 2:
			if sum := uint64(binary.LittleEndian.Uint16(s.counts[2*j:])) + n; sum <= math.MaxUint16 {
				binary.LittleEndian.PutUint16(s.counts[2*j:], uint16(sum))
				return
			}
		case 4:
			if sum := uint64(binary.LittleEndian.Uint32(s.counts[4*j:])) + n; sum <= math.MaxUint32 {
				binary.LittleEndian.PutUint32(s.counts[4*j:], uint32(sum))
				return
			}
		}
	}
	s.incSlow(i, n)
}

func (s *Sketch) incSlow(i int32, n uint64) {
	if s.width == 0 {
		s.width = 1
	}
	if s.buckets() == 0 {
		s.offset = i
	}
	if j := i - s.offset; j < 0 || int(j) >= s.buckets() {
		s.extend(i)
	}
	j := int(i - s.offset)
	sum := min(s.at(j)+n, math.MaxUint32)
	for sum > widthMax(s.width) {
		s.widen()
	}
	s.put(j, sum)
}

func widthMax(w uint8) uint64 { return 1<<(8*uint64(w)) - 1 }

// extend grows the bucket range to include i, with a little headroom on
// the side it grows so that a range creeping outwards is not copied at
// every new bucket.
func (s *Sketch) extend(i int32) {
	w := int(s.width)
	lo, hi := s.offset, s.offset+int32(s.buckets())-1
	if s.buckets() == 0 {
		lo, hi = i, i
	}
	head := int32(max(4, s.buckets()/8))
	newLo, newHi := lo, hi
	if i < lo {
		newLo = i - head
	}
	if i > hi {
		newHi = i + head
	}
	size := int(newHi-newLo+1) * w
	var grown []byte
	if cap(s.counts) >= size {
		grown = s.counts[:size]
	} else {
		grown = make([]byte, size)
	}
	if n := s.buckets(); n > 0 {
		copy(grown[int(lo-newLo)*w:], s.counts[:n*w]) // copy handles the overlap
		clear(grown[:int(lo-newLo)*w])
	}
	clear(grown[int(hi-newLo+1)*w:])
	s.counts, s.offset = grown, newLo
}

// widen doubles the counter width, keeping every count.
func (s *Sketch) widen() {
	n := s.buckets()
	old := *s
	s.width *= 2
	s.counts = make([]byte, n*int(s.width))
	for j := range n {
		s.put(j, old.at(j))
	}
}
