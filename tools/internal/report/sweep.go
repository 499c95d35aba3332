// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"math"

	"github.com/llmslo/llmslo/internal/contract"
	"github.com/llmslo/llmslo/tools/internal/report/schema"
)

// sweep re-judges SLO i with every threshold scaled: a known value fails
// when it exceeds scale x threshold; failed requests stay violated and
// undecidable constraints stay unknown. At 1x it reproduces the
// processor's verdicts. Under exclude, a point's goodput is over the
// requests decided at its scale (an unknown request is decided once a known
// value fails).
func (e *Engine) sweep(i int, order []uint32) []schema.SweepCurve {
	def := e.slos[i]
	scales := schema.SweepScales()
	newAcc := func() *sweepAcc {
		return &sweepAcc{met: make([]int64, len(scales)), decided: make([]int64, len(scales))}
	}
	all := newAcc()
	per := make([]*sweepAcc, len(e.groups))
	for k, rec := range e.recs.all() {
		v := e.verdict(k, i)
		if v&vSelected == 0 {
			continue
		}
		if per[rec.group] == nil {
			per[rec.group] = newAcc()
		}
		for _, a := range []*sweepAcc{all, per[rec.group]} {
			a.add(v, rec, def, scales)
		}
	}
	curve := func(g schema.Group, a *sweepAcc) schema.SweepCurve {
		c := schema.SweepCurve{SLO: def.name, Group: g}
		for si, s := range scales {
			n := a.n
			if def.excludeUnknown {
				n = a.decided[si]
			}
			c.Points = append(c.Points, schema.SweepPoint{Scale: s, Met: a.met[si], Goodput: ratio(a.met[si], n)})
		}
		return c
	}
	out := []schema.SweepCurve{curve(schema.Group{}, all)}
	for _, gi := range order {
		if per[gi] != nil {
			out = append(out, curve(e.groups[gi], per[gi]))
		}
	}
	return out
}

// sweepAcc counts one group's requests, and per scale those met and those
// decided.
type sweepAcc struct {
	n            int64
	met, decided []int64
}

func (a *sweepAcc) add(v uint16, rec *record, def sloDef, scales []float64) {
	a.n++
	failed, unknown := v&vError != 0, v>>vUnkShift&vConstrMask != 0
	vals := constraintValues(rec)
	for si, s := range scales {
		ok := true
		for c, l := range def.limits {
			if l.Set && !math.IsNaN(vals[c]) && vals[c] > l.Seconds*s {
				ok = false
				break
			}
		}
		if failed || !ok || !unknown {
			a.decided[si]++
		}
		if ok && !failed && !unknown {
			a.met[si]++
		}
	}
}

// constraintValues are the record's values each constraint bounds, in
// constraintNames order: a constraint added without its value here fails
// to compile.
func constraintValues(rec *record) [contract.NumConstraints]float64 {
	return [...]float64{rec.ttft, rec.tpot, rec.itlMax, rec.e2e, rec.queue}
}
