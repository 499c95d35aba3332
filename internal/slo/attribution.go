// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package slo

import (
	"github.com/llmslo/llmslo/internal/contract"
	"github.com/llmslo/llmslo/internal/derive"
)

// This file names why a request failed a constraint (README, Decisions,
// "Why a request missed"): one rule per constraint, each a function, over
// the request's derived values and the parts of its TTFT. The cause names
// are internal/contract's.

// DefaultTPOTBound is the time per output token, in seconds, that the E2E
// rule takes as a healthy pace when the SLO bounds no TPOT: 50 ms, 20 tokens
// a second, faster than anyone reads a streamed answer.
const DefaultTPOTBound = 0.050

// Parts are what a request's TTFT is made of, as far as its spans say:
// the engine's queue, prefill and KV transfer, and, on a client span joined
// to its engine span, the path between them (derive.NetworkTime). A part
// that is not Known is not used.
type Parts struct {
	Queue, Prefill, KVTransfer, Network derive.Value
}

// PartsOf returns the parts a request's own result carries (an engine
// span's; a client span's network time).
func PartsOf(r *derive.Result) Parts {
	return Parts{Queue: r.QueueTime, Prefill: r.PrefillTime, KVTransfer: r.KVTransferTime, Network: r.NetworkTime}
}

// causeRule names the cause of one failed constraint of a request judged
// against l.
type causeRule func(r *derive.Result, p *Parts, l *Limits) contract.Cause

// Attribute sets v.Causes to the cause of every constraint v lists as
// failed, in the same order, each by its constraint's rule; l are the
// limits v was judged against, p the request's parts. It appends to
// v.Causes[:0], so it allocates nothing once v.Causes has grown to the
// number of constraints; a caller with no failed constraint
// (v.Violated == 0) need not build p.
func Attribute(r *derive.Result, p *Parts, l *Limits, v *Verdict) {
	v.Causes = v.Causes[:0]
	for i := range constraints {
		if v.Violated&(1<<i) != 0 {
			v.Causes = append(v.Causes, contract.CauseEntry(i, constraints[i].cause(r, p, l)))
		}
	}
}

// ttftMiss: a TTFT miss goes to its largest known part (ties to the first
// of queue, prefill, KV transfer, network); unattributed when no part is
// known or the known parts add up to less than half the TTFT.
func ttftMiss(r *derive.Result, p *Parts, _ *Limits) contract.Cause {
	return largestPart(r.TTFT, p)
}

func largestPart(ttft derive.Value, p *Parts) contract.Cause {
	best, bestV, sum := contract.CauseUnattributed, -1.0, 0.0
	for _, x := range [...]struct {
		c contract.Cause
		v derive.Value
	}{{contract.CauseQueue, p.Queue}, {contract.CausePrefill, p.Prefill}, {contract.CauseKVTransfer, p.KVTransfer}, {contract.CauseNetwork, p.Network}} {
		if x.v.S != derive.Known {
			continue
		}
		sum += x.v.V
		if x.v.V > bestV {
			best, bestV = x.c, x.v.V
		}
	}
	if ttft.S != derive.Known || sum < ttft.V/2 {
		return contract.CauseUnattributed
	}
	return best
}

// paceMiss: a TPOT or ITL miss is decode.
func paceMiss(*derive.Result, *Parts, *Limits) contract.Cause { return contract.CauseDecode }

// queueMiss: a queue_time miss is the queue.
func queueMiss(*derive.Result, *Parts, *Limits) contract.Cause { return contract.CauseQueue }

// e2eMiss: E2E = TTFT + TPOT × (N − 1). The miss is decode when TPOT is
// above the SLO's TPOT bound (DefaultTPOTBound when it has none); at a
// healthy TPOT it is output_length when N × TPOT alone exceeds the E2E
// budget (N per sequence); otherwise TTFT pushed it over, and the TTFT
// rule names the part (unattributed without a TTFT: a one-token or
// non-streamed answer cannot be split).
func e2eMiss(r *derive.Result, p *Parts, l *Limits) contract.Cause {
	if r.TPOT.S == derive.Known {
		bound := DefaultTPOTBound
		if l.TPOT.Set && !l.TPOT.Invalid {
			bound = l.TPOT.Seconds
		}
		if r.TPOT.V > bound {
			return contract.CauseDecode
		}
		if perSequence(r)*r.TPOT.V > l.E2E.Seconds {
			return contract.CauseOutputLength
		}
	}
	return largestPart(r.TTFT, p)
}

// perSequence is N per sequence: the output tokens TPOT divides by.
func perSequence(r *derive.Result) float64 {
	return float64(r.OutputTokens) / float64(max(r.Sequences, 1))
}
