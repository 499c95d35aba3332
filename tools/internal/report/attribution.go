// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"cmp"
	"encoding/hex"
	"math"
	"slices"
	"unsafe"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmslo/llmslo/internal/contract"
	"github.com/llmslo/llmslo/tools/internal/report/schema"
)

// Why each SLO's requests missed: the failed constraints by the cause the
// processor named on the span (llm.slo.<name>.causes), and the slowest
// misses with the parts of their latency.

// causeSet packs the causes of one SLO's verdict on one record, beside the
// verdict: a field of causeBits per constraint in constraintNames order,
// holding the cause + 1 (0: the span names no cause for the constraint).
// Six constraints or more need it widened (the guard below says when).
type causeSet uint16

const (
	causeBits = 3
	causeMask = 1<<causeBits - 1
)

// A cause or a constraint more than the fields hold would corrupt reports
// silently: fail to compile instead (widen the fields first).
var (
	_ [causeMask - int(contract.NumCauses)]struct{}
	_ [int(unsafe.Sizeof(causeSet(0)))*8 - causeBits*contract.NumConstraints]struct{}
)

// causeBitsOf packs a causes attribute: the first entry of each constraint
// counts, an entry outside the closed set is skipped (it reads as none).
func causeBitsOf(val pcommon.Value) causeSet {
	if val.Type() != pcommon.ValueTypeSlice {
		return 0
	}
	var bits causeSet
	s := val.Slice()
	for i := 0; i < s.Len() && i < 2*contract.NumConstraints; i++ {
		c, cause, ok := contract.ParseCauseEntry(s.At(i).AsString())
		shift := causeBits * c
		if ok && bits>>shift&causeMask == 0 {
			bits |= causeSet(cause+1) << shift
		}
	}
	return bits
}

// causeOf is the cause of constraint c in packed causes: its index in
// contract.CauseNames, or -1 for none.
func causeOf(causes causeSet, c int) int {
	return int(causes>>(causeBits*c)&causeMask) - 1
}

// The parts of a request's latency the report keeps for a slow miss, in
// schema.PartIDs order (rest is computed).
const (
	partQueue = iota
	partPrefill
	partKVTransfer
	partNetwork
	partDecode
	numParts
)

type parts [numParts]float64

func unknownParts() parts {
	var p parts
	for i := range p {
		p[i] = math.NaN()
	}
	return p
}

// attrAcc counts one group's failed constraints by cause: [c][0] those
// without a cause, [c][k+1] those of cause k.
type attrAcc [contract.NumConstraints][contract.NumCauses + 1]int64

func (a *attrAcc) add(fail uint16, causes causeSet) {
	for c := range contract.NumConstraints {
		if fail&(1<<c) != 0 {
			a[c][causeOf(causes, c)+1]++
		}
	}
}

// attribution is SLO i's misses by constraint and cause, overall and per
// group in order, and its slowest misses.
func (e *Engine) attribution(i int, order []uint32) schema.Attribution {
	var all attrAcc
	per := make([]*attrAcc, len(e.groups))
	for k, rec := range e.recs.all() {
		v := e.verdict(k, i)
		fail := v >> vFailShift & vConstrMask
		if fail == 0 {
			continue
		}
		g := rec.group
		if per[g] == nil {
			per[g] = &attrAcc{}
		}
		causes := e.cause(k, i)
		all.add(fail, causes)
		per[g].add(fail, causes)
	}
	out := schema.Attribution{SLO: e.slos[i].name, Groups: []schema.AttributionGroup{all.group(schema.Group{})}}
	for _, g := range order {
		if per[g] != nil {
			out.Groups = append(out.Groups, per[g].group(e.groups[g]))
		}
	}
	out.Slowest = e.slowMisses(i)
	return out
}

func (a *attrAcc) group(g schema.Group) schema.AttributionGroup {
	out := schema.AttributionGroup{Group: g, Constraints: []schema.ConstraintCauses{}}
	for c := range contract.NumConstraints {
		var misses int64
		for _, n := range a[c] {
			misses += n
		}
		if misses == 0 {
			continue
		}
		cc := schema.ConstraintCauses{Constraint: constraintNames[c], Misses: misses}
		for k, n := range a[c] {
			if n == 0 {
				continue
			}
			name := schema.CauseNone
			if k > 0 {
				name = contract.CauseNames()[k-1]
			}
			lo, hi := wilson(int(n), int(misses))
			cc.Causes = append(cc.Causes, schema.CauseCount{Cause: name, Requests: n, Share: ratio(n, misses),
				ShareCI95: [2]schema.Num{schema.Num(lo), schema.Num(hi)}})
		}
		// Stable: on a tie the closed set's order stays, none last.
		slices.SortStableFunc(cc.Causes, func(x, y schema.CauseCount) int { return cmp.Compare(y.Requests, x.Requests) })
		out.Constraints = append(out.Constraints, cc)
	}
	return out
}

// addMisses offers the request (record idx) to the slowest misses of every
// SLO it failed a constraint of.
func (e *Engine) addMisses(idx int, span ptrace.Span, p *parts) {
	rec := e.recs.at(idx)
	key := rec.e2e
	if math.IsNaN(key) {
		key = float64(rec.dur) / 1e9
	}
	for i := range e.slos {
		if e.verdict(idx, i)>>vFailShift&vConstrMask != 0 {
			e.misses[i].addParts(key, span, idx, p)
		}
	}
}

// slowMisses are SLO i's slowest misses, slowest first.
func (e *Engine) slowMisses(i int) []schema.SlowMiss {
	out := []schema.SlowMiss{}
	for _, s := range e.misses[i].sorted() {
		rec := e.recs.at(s.record)
		v, causes := e.verdict(s.record, i), e.cause(s.record, i)
		m := schema.SlowMiss{TraceID: hex.EncodeToString(s.trace[:]), SpanID: hex.EncodeToString(s.span[:]),
			Group: e.groups[rec.group], Start: rfc3339(rec.start), Violations: []string{}, Causes: []string{},
			TTFT: schema.Num(rec.ttft), E2E: schema.Num(rec.e2e), Parts: missParts(s.parts, rec.e2e)}
		if v&vError != 0 {
			m.Violations = append(m.Violations, contract.ViolationError)
		}
		for c := range contract.NumConstraints {
			if v>>vFailShift&(1<<c) == 0 {
				continue
			}
			m.Violations = append(m.Violations, constraintNames[c])
			if k := causeOf(causes, c); k >= 0 {
				m.Causes = append(m.Causes, contract.CauseEntry(c, contract.Cause(k)))
			}
		}
		out = append(out, m)
	}
	return out
}

// missParts are a slow miss's parts by schema.PartIDs, rest = E2E less
// the known parts (never negative: the engine's clock is not the
// frontend's).
func missParts(p parts, e2e float64) map[string]schema.Num {
	out := make(map[string]schema.Num, numParts+1)
	known := 0.0
	for k, v := range p {
		out[schema.PartIDs[k]] = schema.Num(v)
		if !math.IsNaN(v) {
			known += v
		}
	}
	out[schema.PartIDs[numParts]] = schema.NaN()
	if !math.IsNaN(e2e) {
		out[schema.PartIDs[numParts]] = schema.Num(max(0, e2e-known))
	}
	return out
}
