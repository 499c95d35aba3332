// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"time"

	"github.com/llmslo/llmslo/tools/internal/report/schema"
)

// timeline counts SLO i's verdicts in at most 60 buckets of request start.
func (e *Engine) timeline(i int) schema.Timeline {
	t := schema.Timeline{SLO: e.slos[i].name, Buckets: []schema.TimelineBucket{}}
	if e.recs.count() == 0 || e.maxEnd <= e.minStart {
		return t
	}
	span := e.maxEnd - e.minStart
	step := niceStep(span / 60)
	t.Step = float64(step) / 1e9
	nb := int(span/step) + 1
	t.Buckets = make([]schema.TimelineBucket, nb)
	for k, rec := range e.recs.all() {
		v := e.verdict(k, i)
		if v&vSelected == 0 {
			continue
		}
		b := &t.Buckets[min(nb-1, max(0, int((rec.start-e.minStart)/step)))]
		switch {
		case v&vError != 0 || v>>vFailShift&vConstrMask != 0:
			b.Violated++
		case v>>vUnkShift&vConstrMask != 0:
			b.Unknown++
		default:
			b.Met++
		}
	}
	return t
}

// niceStep rounds a bucket width up to 1, 2 or 5 times a power of ten of
// milliseconds (at least 1 ms).
func niceStep(ns int64) int64 {
	step := int64(time.Millisecond)
	for {
		for _, m := range []int64{1, 2, 5} {
			if step*m >= ns {
				return step * m
			}
		}
		step *= 10
	}
}
