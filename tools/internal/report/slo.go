// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"slices"

	"github.com/llmslo/llmslo/internal/contract"
	"github.com/llmslo/llmslo/internal/slo"
	"github.com/llmslo/llmslo/tools/internal/report/schema"
)

// Each SLO's goodput, overall and per group, from the verdicts the
// processor wrote.

type sloAcc struct {
	requests, met, violated, unknown int64
	tokens, tokensMet                int64
	violations                       map[string]int64
	combos                           map[uint16]int64
	attain                           [contract.NumConstraints]int64
	// attainOf[c] is the denominator of attain[c] under exclude: the
	// requests still decidable with constraint c dropped.
	attainOf [contract.NumConstraints]int64
}

func (e *Engine) sloReport(i int, order []uint32, dur float64) schema.SLOReport {
	def := e.slos[i]
	rep := schema.SLOReport{Name: def.name, Constraints: map[string]float64{}, UnknownVerdicts: string(slo.UnknownBad), Denominator: schema.DenominatorRequests,
		Objective: schema.NaN()}
	if def.objective > 0 {
		rep.Objective = schema.Num(def.objective)
	}
	if def.excludeUnknown {
		rep.UnknownVerdicts, rep.Denominator = string(slo.UnknownExclude), schema.DenominatorDecidable
	}
	for c, l := range def.limits {
		if l.Set {
			rep.Constraints[constraintNames[c]] = l.Seconds
		}
	}
	all := &sloAcc{violations: map[string]int64{}, combos: map[uint16]int64{}}
	per := make([]*sloAcc, len(e.groups))
	for k, rec := range e.recs.all() {
		v := e.verdict(k, i)
		if v&vSelected == 0 {
			continue
		}
		g := per[rec.group]
		if g == nil {
			g = &sloAcc{violations: map[string]int64{}, combos: map[uint16]int64{}}
			per[rec.group] = g
		}
		all.add(v, rec, def)
		g.add(v, rec, def)
	}
	rep.Groups = append(rep.Groups, all.group(schema.Group{}, def, dur))
	for _, gi := range order {
		if per[gi] != nil {
			rep.Groups = append(rep.Groups, per[gi].group(e.groups[gi], def, dur))
		}
	}
	return rep
}

func (a *sloAcc) add(v uint16, rec *record, def sloDef) {
	a.requests++
	tokens := int64(max(rec.outTokens, 0))
	a.tokens += tokens
	fail := v >> vFailShift & vConstrMask
	unk := v >> vUnkShift & vConstrMask
	failed := v&vError != 0
	switch {
	case !failed && fail == 0 && unk == 0:
		a.met++
		a.tokensMet += tokens
	case failed || fail != 0:
		a.violated++
	default:
		a.unknown++
	}
	if failed {
		a.violations[contract.ViolationError]++
	}
	for c := range constraintNames {
		if fail&(1<<c) != 0 {
			a.violations[constraintNames[c]]++
		}
		if unk&(1<<c) != 0 {
			a.violations[constraintNames[c]+contract.UnknownSuffix]++
		}
	}
	if failed || fail != 0 {
		key := fail
		if failed {
			key |= 1 << constraintBits
		}
		a.combos[key]++
	}
	// Attainable: met with constraint c dropped; decided then unless
	// another constraint is still unknown and nothing fails.
	for c, l := range def.limits {
		if !l.Set {
			continue
		}
		if failed || fail&^(1<<c) != 0 || unk&^(1<<c) == 0 {
			a.attainOf[c]++
		}
		if !failed && fail&^(1<<c) == 0 && unk&^(1<<c) == 0 {
			a.attain[c]++
		}
	}
}

func ratio(k, n int64) schema.Num {
	if n == 0 {
		return schema.NaN()
	}
	return schema.Num(float64(k) / float64(n))
}

func perSecond(k int64, dur float64) schema.Num {
	if !(dur > 0) {
		return schema.NaN()
	}
	return schema.Num(float64(k) / dur)
}

func (a *sloAcc) group(g schema.Group, def sloDef, dur float64) schema.SLOGroup {
	denom := a.requests
	if def.excludeUnknown {
		denom = a.met + a.violated
	}
	lo, hi := wilson(int(a.met), int(denom))
	out := schema.SLOGroup{
		Group: g, Requests: a.requests, Met: a.met, Violated: a.violated, Unknown: a.unknown,
		Goodput: ratio(a.met, denom), GoodputCI95: [2]schema.Num{schema.Num(lo), schema.Num(hi)},
		GoodPerSecond: perSecond(a.met, dur), OutputTokens: a.tokens, OutputTokensMet: a.tokensMet,
		TokenGoodput: ratio(a.tokensMet, a.tokens), GoodTokensPerSecond: perSecond(a.tokensMet, dur),
		Violations: a.violations, Attainable: map[string]schema.Num{}, Combinations: []schema.Combination{},
	}
	for key, n := range a.combos {
		var cs []string
		if key&(1<<constraintBits) != 0 {
			cs = append(cs, contract.ViolationError)
		}
		for c := range constraintNames {
			if key&(1<<c) != 0 {
				cs = append(cs, constraintNames[c])
			}
		}
		out.Combinations = append(out.Combinations, schema.Combination{Constraints: cs, Requests: n})
	}
	slices.SortFunc(out.Combinations, func(x, y schema.Combination) int {
		if x.Requests != y.Requests {
			return int(y.Requests - x.Requests)
		}
		return slices.Compare(x.Constraints, y.Constraints)
	})
	for c, l := range def.limits {
		if l.Set {
			n := a.requests
			if def.excludeUnknown {
				n = a.attainOf[c]
			}
			out.Attainable[constraintNames[c]] = ratio(a.attain[c], n)
		}
	}
	return out
}
