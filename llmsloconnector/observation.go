// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
	"math/bits"

	"github.com/llmslo/llmslo/internal/contract"
	"github.com/llmslo/llmslo/internal/exemplar"
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
