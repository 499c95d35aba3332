package aggregate

import (
	"time"
)

// Window is a sliding window of sketches: Slots sub-windows of Width/Slots
// each, advanced by the clock. A quantile over the window merges the
// sub-windows that are still inside it, so the window slides in steps of one
// sub-window.
type Window struct {
	cfg   *SketchConfig
	slots []*Sketch
	ends  []time.Time // end of the period each slot holds
	width time.Duration
	cur   int
}

// NewWindow returns a window of the given width in `slots` steps.
func NewWindow(cfg *SketchConfig, width time.Duration, slots int) *Window {
	return &Window{cfg: cfg, slots: make([]*Sketch, slots), ends: make([]time.Time, slots), width: width}
}

func (w *Window) step() time.Duration { return w.width / time.Duration(len(w.slots)) }

// slot returns the sketch of the sub-window containing now.
func (w *Window) slot(now time.Time) *Sketch {
	if now.Before(w.ends[w.cur]) && w.slots[w.cur] != nil {
		return w.slots[w.cur]
	}
	w.cur = (w.cur + 1) % len(w.slots)
	w.ends[w.cur] = now.Truncate(w.step()).Add(w.step())
	if w.slots[w.cur] == nil {
		w.slots[w.cur] = w.cfg.New()
	} else {
		w.slots[w.cur].Reset()
	}
	return w.slots[w.cur]
}

// Add records v at time now.
func (w *Window) Add(now time.Time, v float64) { w.slot(now).Add(v) }

// AddAll records every value of vs at time now.
func (w *Window) AddAll(now time.Time, vs []float64) {
	s := w.slot(now)
	for _, v := range vs {
		s.Add(v)
	}
}

// MergeInto resets dst and merges into it the sub-windows still inside the
// window ending at now. dst must come from the window's SketchConfig; one
// scratch sketch serves every window at flush time, so a window holds only
// its sub-windows.
func (w *Window) MergeInto(dst *Sketch, now time.Time) *Sketch {
	dst.Reset()
	from := now.Add(-w.width)
	for i, s := range w.slots {
		if s != nil && w.ends[i].After(from) {
			dst.Merge(s)
		}
	}
	return dst
}

// Ratio is a sliding window of two counts (good of total), in the same
// sub-windows as Window.
type Ratio struct {
	good, total []uint64
	ends        []time.Time
	width       time.Duration
	cur         int
}

// NewRatio returns a ratio window.
func NewRatio(width time.Duration, slots int) *Ratio {
	return &Ratio{good: make([]uint64, slots), total: make([]uint64, slots), ends: make([]time.Time, slots), width: width}
}

// Add counts one event at now, good or not.
func (r *Ratio) Add(now time.Time, good bool) {
	step := r.width / time.Duration(len(r.good))
	if !now.Before(r.ends[r.cur]) {
		r.cur = (r.cur + 1) % len(r.good)
		r.ends[r.cur] = now.Truncate(step).Add(step)
		r.good[r.cur], r.total[r.cur] = 0, 0
	}
	r.total[r.cur]++
	if good {
		r.good[r.cur]++
	}
}

// Value returns good/total over the window ending at now, and false when
// the window saw nothing.
func (r *Ratio) Value(now time.Time) (float64, bool) {
	from := now.Add(-r.width)
	var g, t uint64
	for i := range r.good {
		if r.ends[i].After(from) {
			g += r.good[i]
			t += r.total[i]
		}
	}
	if t == 0 {
		return 0, false
	}
	return float64(g) / float64(t), true
}
