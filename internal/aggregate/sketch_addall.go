// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package aggregate

import (
	"encoding/binary"
	"math"
)

// AddAll records vs[i] with weight weights[i]·scale (scale each when
// weights is empty; else len(weights) = len(vs)), as AddN of each would.
// Without weights (the connector's default) it works in chunks of 64
// values: one loop maps them to buckets into an array on the stack, a
// second adds them to the counters at their width. Each loop keeps only
// its own state in registers and exits to inc for what it cannot do
// inline; one loop doing both spilled to the stack at every value.
func (s *Sketch) AddAll(vs []float64, weights []uint64, scale uint64) {
	if len(weights) != 0 {
		s.addWeighted(vs, weights[:len(vs)], scale)
		return
	}
	if scale == 0 {
		return
	}
	var idx [64]int32
	for len(vs) > 0 {
		chunk := vs[:min(len(vs), len(idx))]
		vs = vs[len(chunk):]
		s.incAll(idx[:s.indexChunk(chunk, &idx, scale)], scale)
	}
}

// indexChunk adds vs's valid values (len(vs) ≤ 64), scale each, to the
// totals, writes the buckets of the positive ones to idx, and returns how
// many it wrote.
func (s *Sketch) indexChunk(vs []float64, idx *[64]int32, scale uint64) int {
	var n int
	var zeros uint64
	for len(vs) > 0 {
		r := s.cfg.indexRun(vs, idx[n:])
		n += r
		if r == len(vs) {
			break
		}
		switch v := vs[r]; {
		case positive(v): // below MinValue
			idx[n] = s.cfg.index(v)
			n++
		case valid(v): // 0 or -0; AddN skips the others
			zeros++
		}
		vs = vs[r+1:]
	}
	// Totals wrap as AddN's do, so k additions of scale are k·scale.
	s.total += (uint64(n) + zeros) * scale
	s.zeros += zeros * scale
	return n
}

// indexRun writes to out (len(out) ≥ len(vs)) the buckets of vs's
// leading run of finite values from MinValue up and returns its length.
// Ending the run at any other value, rather than clamping or counting it
// here, keeps the loop's state within the registers.
func (c *SketchConfig) indexRun(vs []float64, out []int32) int {
	cellBase, edgeFrac, sub := c.cellBase, c.edgeFrac, int32(c.SubBuckets)
	minBits := math.Float64bits(c.MinValue) // positive values order as their bits
	out = out[:len(vs)]
	for i, v := range vs {
		b := math.Float64bits(v)
		if b-minBits > maxFinite-minBits {
			return i
		}
		out[i] = sketchIndex(cellBase, edgeFrac, sub, b)
	}
	return len(vs)
}

// incAll adds n to the buckets idx, in runs at the counters' width that
// end at a count inc must make: one out of the range or past the width.
func (s *Sketch) incAll(idx []int32, n uint64) {
	for len(idx) > 0 {
		var p int
		switch s.width {
		case 1:
			p = incRun1(s.counts, s.offset, idx, n)
		case 2:
			p = incRun2(s.counts, s.offset, idx, n)
		case 4:
			p = incRun4(s.counts, s.offset, idx, n)
		}
		if p == len(idx) {
			return
		}
		s.inc(idx[p], n)
		idx = idx[p+1:]
	}
}

// incRun1 adds n to one-byte counters c (bucket offset first) at idx, up
// to the first it cannot, and returns that one's position in idx.
func incRun1(c []byte, offset int32, idx []int32, n uint64) int {
	if n > math.MaxUint8 {
		return 0
	}
	limit, n8 := math.MaxUint8-uint8(n), uint8(n)
	for p, k := range idx {
		j := uint(k - offset)
		if j >= uint(len(c)) || c[j] > limit {
			return p
		}
		c[j] += n8
	}
	return len(idx)
}

// incRun2 is incRun1 for two-byte little-endian counters. The byte
// loads and stores, behind one range test, compile to one 16-bit load and
// store with no bounds check (binary.LittleEndian on a subslice does not).
func incRun2(c []byte, offset int32, idx []int32, n uint64) int {
	if n > math.MaxUint16 {
		return 0
	}
	limit, n16 := math.MaxUint16-uint16(n), uint16(n)
	for p, k := range idx {
		i := 2 * uint(k-offset) // below 0: huge
		if i+1 >= uint(len(c)) {
			return p
		}
		v := uint16(c[i]) | uint16(c[i+1])<<8
		if v > limit {
			return p
		}
		v += n16
		c[i], c[i+1] = byte(v), byte(v>>8)
	}
	return len(idx)
}

// incRun4 is incRun2 for four-byte counters.
func incRun4(c []byte, offset int32, idx []int32, n uint64) int {
	if n > math.MaxUint32 {
		return 0
	}
	limit, n32 := math.MaxUint32-uint32(n), uint32(n)
	for p, k := range idx {
		i := 4 * uint(k-offset) // below 0: huge
		if i+3 >= uint(len(c)) {
			return p
		}
		v := uint32(c[i]) | uint32(c[i+1])<<8 | uint32(c[i+2])<<16 | uint32(c[i+3])<<24
		if v > limit {
			return p
		}
		v += n32
		c[i], c[i+1], c[i+2], c[i+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
	}
	return len(idx)
}

// addWeighted records vs[i] with weight weights[i]·scale (len(weights) =
// len(vs)) in one loop with the totals in registers and the common
// counter update inline. Token weights are opt-in and change from gap to
// gap, so they keep this fused loop rather than the chunked one.
func (s *Sketch) addWeighted(vs []float64, weights []uint64, scale uint64) {
	var total, zeros uint64
	for i, v := range vs {
		n := MulSat(weights[i], scale)
		if !valid(v) || n == 0 {
			continue
		}
		total += n
		if v == 0 {
			zeros += n
			continue
		}
		k := s.cfg.index(v)
		j, c := uint(k-s.offset), s.counts
		switch s.width { // inc's common case, inline
		case 1:
			if j < uint(len(c)) && n <= math.MaxUint8-uint64(c[j]) {
				c[j] += uint8(n)
				continue
			}
		case 2:
			if j < uint(len(c))/2 {
				p := (*[2]byte)(c[2*j:])
				if x := binary.LittleEndian.Uint16(p[:]); n <= math.MaxUint16-uint64(x) {
					binary.LittleEndian.PutUint16(p[:], x+uint16(n))
					continue
				}
			}
		case 4:
			if j < uint(len(c))/4 {
				p := (*[4]byte)(c[4*j:])
				if x := binary.LittleEndian.Uint32(p[:]); n <= math.MaxUint32-uint64(x) {
					binary.LittleEndian.PutUint32(p[:], x+uint32(n))
					continue
				}
			}
		}
		s.inc(k, n)
	}
	s.total += total
	s.zeros += zeros
}
