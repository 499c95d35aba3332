// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package aggregate

import (
	"time"
)

// RatioSlots is the number of sub-windows of a Ratio.
const RatioSlots = 6

// Ratio is a sliding window of two counts (good of total), in RatioSlots
// sub-windows of its width. It is a value (no pointers), so a per-SLO
// counter set holding one is a single allocation.
type Ratio struct {
	good, total [RatioSlots]uint64
	ends        [RatioSlots]int64 // Unix ns
	step        int64
	cur         int
}

// NewRatio returns a ratio window.
func NewRatio(width time.Duration) Ratio {
	return Ratio{step: int64(width) / RatioSlots}
}

// Add counts one event at now, good or not.
func (r *Ratio) Add(now time.Time, good bool) { r.AddN(now, good, 1) }

// AddN counts n events at now, all good or all not: a sampled request
// stands for its adjusted count, so requests sampled at different rates
// weigh in the ratio as the requests they stand for.
func (r *Ratio) AddN(now time.Time, good bool, n uint64) {
	t := now.UnixNano()
	if t >= r.ends[r.cur] {
		r.cur = (r.cur + 1) % RatioSlots
		r.ends[r.cur] = t - t%r.step + r.step
		r.good[r.cur], r.total[r.cur] = 0, 0
	}
	r.total[r.cur] += n
	if good {
		r.good[r.cur] += n
	}
}

// Value returns good/total over the window ending at now, and false when
// the window saw nothing.
func (r *Ratio) Value(now time.Time) (float64, bool) {
	from := now.UnixNano() - r.step*RatioSlots
	var g, t uint64
	for i := range RatioSlots {
		if r.ends[i] > from {
			g += r.good[i]
			t += r.total[i]
		}
	}
	if t == 0 {
		return 0, false
	}
	return float64(g) / float64(t), true
}
