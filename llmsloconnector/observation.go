// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
	"math/bits"
	"time"

	"github.com/llmslo/llmslo/internal/contract"
	"github.com/llmslo/llmslo/internal/exemplar"
	"github.com/llmslo/llmslo/llmsloconnector/internal/series"
)

// observation is what one span contributes, read from it before the series
// lock is taken. It refers to nothing of the batch.
type observation struct {
	obsScalars
	// gaps are the span's inter-token gaps; weights, when not nil, the
	// number of tokens each stands for (token-aware ITL).
	gaps    []float64
	weights []uint64
	slos    []sloObservation
}

// obsScalars are the observation's pointer-free fields, apart from its
// slices so that resetting them per span is a plain clear: assigning a
// whole struct that holds pointers costs a bulk write barrier while the GC
// runs, which collector profiles showed.
type obsScalars struct {
	layer  layerIndex
	values [numHistKinds]float64
	has    [numHistKinds]bool
	tokens uint64 // output tokens, for token goodput
	usage  usageObservation
	// adjusted is the number of requests the span stands for (1/p of its
	// sampling probability; 1 when unsampled or not read).
	adjusted float64
	// ref is where the span came from, read only for exemplars.
	ref exemplar.Exemplar
	// rejected counts values kept out of the histograms; ignored counts
	// verdicts under SLO names the processors do not judge.
	rejected, ignored int
	// inputClass is the span's index in the connector's inputClasses,
	// when those are on.
	inputClass uint8
}

type sloObservation struct {
	name       string // valid while the span is read
	index      int    // in the connector's sloNames, once resolved
	judged     bool   // the span has the SLO's .met or .violations key
	decided    bool
	met        bool
	violations violationSet
	// causes[k] is the cause of constraint k, for k in caused
	// (llm.slo.<name>.causes).
	causes [contract.NumConstraints]contract.Cause
	caused constraintSet
}

// reset empties o for the next span, keeping its slices' memory.
func (o *observation) reset() {
	o.obsScalars = obsScalars{}
	o.gaps, o.weights, o.slos = o.gaps[:0], o.weights[:0], o.slos[:0]
}

// failed keeps only what a failed span contributes: its layer and its
// verdicts (latency distributions describe successful requests).
func (o *observation) failed() {
	o.obsScalars = obsScalars{layer: o.layer, rejected: o.rejected, ignored: o.ignored, adjusted: o.adjusted, ref: o.ref, inputClass: o.inputClass}
	o.gaps, o.weights = o.gaps[:0], o.weights[:0]
}

// set records a value of kind k unless it is negative, not finite, or
// beyond the processor's own limits (a week; 2^24 tokens): such a value is
// corrupt, and would also stretch the window sketches' memory.
func (o *observation) set(k histKind, v float64) {
	limit := float64(contract.MaxSeconds)
	if k == histInputTokens || k == histOutputTokens {
		limit = contract.MaxTokens
	}
	if v >= 0 && v <= limit {
		o.values[k], o.has[k] = v, true
	}
}

// slo returns the observation of SLO name, adding it.
func (o *observation) slo(name string) *sloObservation {
	for k := range o.slos {
		if o.slos[k].name == name {
			return &o.slos[k]
		}
	}
	o.slos = append(o.slos, sloObservation{name: name})
	return &o.slos[len(o.slos)-1]
}

// resolveSLOs gives each verdict its index among names and drops, counting
// them, those under names that are not counted. It runs once the span is
// known to be the processor's, so a span that is not can teach no name.
func (o *observation) resolveSLOs(names *sloNames) {
	kept := o.slos[:0]
	for _, so := range o.slos {
		if !so.judged { // causes without a verdict teach no name
			o.rejected += bits.OnesCount8(uint8(so.caused))
			continue
		}
		i, ok := names.index(so.name)
		if !ok {
			o.ignored++
			continue
		}
		so.index, so.name = i, ""
		o.rejected += so.matchCauses()
		kept = append(kept, so)
	}
	o.slos = kept
}

// addTo records o in s, n times: n is the span's adjusted count, rounded
// by the caller (1 for an unsampled span). names gives each SLO its
// unknown_verdicts. The caller holds the series' lock.
func (o *observation) addTo(s *series.Series, now time.Time, n uint64, names *sloNames) {
	s.Seen(now)
	s.AddValues(&o.values, &o.has, now, n)
	if len(o.gaps) > 0 {
		s.AddGaps(o.gaps, o.weights, now, n)
	}
	for i := range o.slos {
		so := &o.slos[i]
		v := so.verdict()
		s.AddVerdict(so.index, &v, o.tokens, now, n, o.adjusted > 1, names.excludesUnknown(so.index))
	}
	if s.CountsUsage() {
		o.addUsage(s, n)
	}
	if ex := s.Exemplars(); ex != nil {
		o.offerExemplars(ex)
	}
}

// addUsage adds the span's token counts, n times (its adjusted count).
func (o *observation) addUsage(s *series.Series, n uint64) {
	u := &o.usage
	if o.has[histInputTokens] {
		u.n[usageInput], u.has = uint64(o.values[histInputTokens]), u.has|1<<usageInput
	}
	if o.has[histOutputTokens] {
		u.n[usageOutput], u.has = uint64(o.values[histOutputTokens]), u.has|1<<usageOutput
	}
	if u.has == 0 {
		return
	}
	s.AddUsage(&u.n, u.has, n)
}

// offerExemplars offers o's values, with the span they came from, to a
// series' exemplars. ITL offers the span's largest gap: one exemplar
// candidate per span, whatever the number of gaps. A violated request is
// ranked by its E2E, else its duration (a failed request has only that).
func (o *observation) offerExemplars(ex *series.Exemplars) {
	e := o.ref
	for k := range numHistKinds {
		if o.has[k] {
			e.Value = o.values[k]
			ex.Offer(k, e)
		}
	}
	if len(o.gaps) > 0 {
		e.Value = maxOf(o.gaps)
		ex.Offer(histITL, e)
	}
	e.Value = o.values[histDuration]
	if o.has[histE2E] {
		e.Value = o.values[histE2E]
	}
	for i := range o.slos {
		if so := &o.slos[i]; so.decided && !so.met {
			ex.OfferViolated(so.index, e)
		}
	}
}

func maxOf(vs []float64) float64 {
	m := vs[0]
	for _, v := range vs[1:] {
		m = max(m, v)
	}
	return m
}
