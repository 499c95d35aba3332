// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package aggregate

import (
	"math"
	"math/bits"
	"time"
)

// Window is a sliding window of sketches: Slots sub-windows of Width/Slots
// each, advanced by the clock. A quantile over the window merges the
// sub-windows that are still inside it, so the window slides in steps of one
// sub-window. A sub-window's sketch is created on its first value.
type Window struct {
	cfg   *SketchConfig
	slots []*Sketch
	ends  []int64 // end of the period each slot holds, Unix ns
	// heaviest[i] is the most values one call added to slot i: one span's
	// weight, which bounds how far that span can move a quantile.
	heaviest []uint64
	step     int64
	cur      int
}

// NewWindow returns a window of the given width in `slots` steps.
func NewWindow(cfg *SketchConfig, width time.Duration, slots int) *Window {
	return &Window{cfg: cfg, slots: make([]*Sketch, slots), ends: make([]int64, slots), heaviest: make([]uint64, slots),
		step: int64(width) / int64(slots)}
}

// slot returns the sketch of the sub-window containing now.
func (w *Window) slot(now time.Time) *Sketch {
	t := now.UnixNano()
	if t < w.ends[w.cur] && w.slots[w.cur] != nil {
		return w.slots[w.cur]
	}
	w.cur = (w.cur + 1) % len(w.slots)
	w.ends[w.cur] = t - t%w.step + w.step
	if w.slots[w.cur] == nil {
		w.slots[w.cur] = w.cfg.New()
	} else {
		w.slots[w.cur].Reset()
	}
	w.heaviest[w.cur] = 0
	return w.slots[w.cur]
}

// Add records v at time now.
func (w *Window) Add(now time.Time, v float64) { w.AddN(now, v, 1) }

// AddN records v at time now with weight n (a sampled span standing for n
// requests).
func (w *Window) AddN(now time.Time, v float64, n uint64) {
	s := w.slot(now)
	before := s.total
	s.AddN(v, n)
	w.weigh(s.total - before)
}

// AddAll records every value of vs at time now, vs[i] weighted by
// weights[i] (1 each when weights is empty) times scale: one span's values,
// whose total weight counts as one call's.
func (w *Window) AddAll(now time.Time, vs []float64, weights []uint64, scale uint64) {
	s := w.slot(now)
	before := s.total
	s.AddAll(vs, weights, scale)
	w.weigh(s.total - before)
}

// weigh remembers the weight of the call that just added to the current
// slot.
func (w *Window) weigh(n uint64) {
	if n > w.heaviest[w.cur] {
		w.heaviest[w.cur] = n
	}
}

// Heaviest is the most values one call added to the window ending at now
// (0 when empty): with it, a caller can tell whether one span could be a
// quantile of the window by itself.
func (w *Window) Heaviest(now time.Time) uint64 {
	from := now.UnixNano() - w.step*int64(len(w.slots))
	var m uint64
	for i, s := range w.slots {
		if s != nil && w.ends[i] > from {
			m = max(m, w.heaviest[i])
		}
	}
	return m
}

// MulSat is a*b, or the largest uint64 when the product overflows: a
// weight times an adjusted count must not wrap to a small number.
func MulSat(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	if hi != 0 {
		return math.MaxUint64
	}
	return lo
}

// MergeInto resets dst and merges into it the sub-windows still inside the
// window ending at now. dst must come from the window's SketchConfig; one
// scratch sketch serves every window at flush time, so a window holds only
// its sub-windows.
func (w *Window) MergeInto(dst *Sketch, now time.Time) *Sketch {
	dst.Reset()
	from := now.UnixNano() - w.step*int64(len(w.slots))
	for i, s := range w.slots {
		if s != nil && w.ends[i] > from {
			dst.Merge(s)
		}
	}
	return dst
}

// Bytes is the memory the window holds.
func (w *Window) Bytes() int {
	n := 88 + 24*len(w.slots)
	for _, s := range w.slots {
		if s != nil {
			n += s.Bytes()
		}
	}
	return n
}
