// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

// Package loadgen generates LLM request traffic with a latency model
// calibrated to published measurements, emits it as the spans real
// producers write (through the OpenTelemetry Go SDK), and records the ground
// truth computed with the project's formulas from the very timings it put on
// the spans.
package loadgen

import (
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// Profile is the latency model of one served model.
type Profile struct {
	Name string
	// Input tokens: lognormal with this median and sigma.
	InputMedian, InputSigma float64
	// Output tokens: lognormal with this median and sigma, capped at MaxOutput.
	OutputMedian, OutputSigma float64
	MaxOutput                 int
	// Prefill time: base + per input token (seconds).
	PrefillBase, PrefillPerToken float64
	// KV transfer time in disaggregated serving (the TRT-LLM shape): base +
	// per input token (seconds), the KV cache's bytes per token over an
	// effective 25 GB/s link, varying by 30% across requests.
	KVBase, KVPerToken float64
	// TPOT: per-request mean time per output token (seconds), lognormal
	// across requests with TPOTSigma; each gap varies by GapSigma around it.
	TPOT, TPOTSigma, GapSigma float64
	// TailProb of requests get their prefill multiplied by a Pareto(TailAlpha)
	// factor capped at TailCap: cold caches, long prompts, preemption.
	TailProb, TailAlpha, TailCap float64
	// StallProb of requests have one inter-token stall of mean StallMean.
	StallProb, StallMean float64
	// ErrorRate of requests fail.
	ErrorRate float64
	// Slots is the number of requests the engine decodes at once; beyond
	// it, requests queue.
	Slots int
}

// Profiles are the built-in models. The default is calibrated to
// Llama-3.1-8B-Instruct on TensorRT-LLM (2026): mean TTFT 162 ms, mean TPOT
// 7.33 ms, mean E2E 1,093 ms at low load; the others are a slower (70B) and
// a faster (1.5B) model.
var Profiles = map[string]Profile{
	"llama-3.1-8b-instruct": {
		Name:        "llama-3.1-8b-instruct",
		InputMedian: 400, InputSigma: 0.7,
		OutputMedian: 110, OutputSigma: 0.55, MaxOutput: 1024,
		PrefillBase: 0.090, PrefillPerToken: 0.00013,
		KVBase: 0.002, KVPerToken: 5.2e-6, // 128 KiB per token
		TPOT: 0.00732, TPOTSigma: 0.15, GapSigma: 0.25,
		TailProb: 0.03, TailAlpha: 1.6, TailCap: 25,
		StallProb: 0.01, StallMean: 0.25,
		ErrorRate: 0.01, Slots: 48,
	},
	"llama-3.1-70b-instruct": {
		Name:        "llama-3.1-70b-instruct",
		InputMedian: 400, InputSigma: 0.7,
		OutputMedian: 110, OutputSigma: 0.55, MaxOutput: 1024,
		PrefillBase: 0.25, PrefillPerToken: 0.0004,
		KVBase: 0.003, KVPerToken: 13.1e-6, // 320 KiB per token
		TPOT: 0.022, TPOTSigma: 0.15, GapSigma: 0.25,
		TailProb: 0.03, TailAlpha: 1.6, TailCap: 25,
		StallProb: 0.02, StallMean: 0.5,
		ErrorRate: 0.01, Slots: 16,
	},
	"qwen2.5-1.5b-instruct": {
		Name:        "qwen2.5-1.5b-instruct",
		InputMedian: 300, InputSigma: 0.7,
		OutputMedian: 90, OutputSigma: 0.55, MaxOutput: 1024,
		PrefillBase: 0.025, PrefillPerToken: 0.00004,
		KVBase: 0.001, KVPerToken: 1.1e-6, // 28 KiB per token
		TPOT: 0.0028, TPOTSigma: 0.15, GapSigma: 0.25,
		TailProb: 0.02, TailAlpha: 1.6, TailCap: 25,
		StallProb: 0.005, StallMean: 0.1,
		ErrorRate: 0.005, Slots: 96,
	},
}

// DefaultModel is the calibrated profile.
const DefaultModel = "llama-3.1-8b-instruct"

// Request is one generated request's engine-side timeline, in seconds
// relative to its arrival at the engine. Its parts: TTFT = Queue +
// Prefill() + KVTransfer, E2E = TTFT + Decode(); a client adds its network
// delay (drawn when its span is written) and ClientDelay.
type Request struct {
	Model        string
	InputTokens  int
	OutputTokens int
	Queue        float64
	// TokenTimes are the times each output token was generated.
	TokenTimes []float64
	Failed     bool
	// KVTransfer is the time the KV cache took from the prefill instance
	// to the decode instance (disaggregated serving), 0 on one instance.
	KVTransfer float64
	// ClientDelay is time between the client and the engine beyond the
	// network's own delay (a network incident), 0 otherwise.
	ClientDelay float64
	// Incident is the kind of the incident that changed the request, ""
	// when none did.
	Incident IncidentKind
	// Replica is the engine that served it (ReplicaName); InFlight, for a
	// request written as an engine span, that replica's engine spans in
	// flight when it arrived, itself included.
	Replica  string
	InFlight int
}

// TTFT is the engine's time to first token.
func (r *Request) TTFT() float64 { return r.TokenTimes[0] }

// E2E is the engine's time to last token.
func (r *Request) E2E() float64 { return r.TokenTimes[len(r.TokenTimes)-1] }

// Prefill is the engine's time from leaving the queue to the first token,
// less any KV transfer: what vLLM writes as time_in_model_prefill
// (first token - scheduled).
func (r *Request) Prefill() float64 { return r.TTFT() - r.Queue - r.KVTransfer }

// Decode is the engine's time from the first token to the last.
func (r *Request) Decode() float64 { return r.E2E() - r.TTFT() }

// shift delays every token by d seconds.
func (r *Request) shift(d float64) {
	for k := range r.TokenTimes {
		r.TokenTimes[k] += d
	}
}

// disaggregate serves r on a prefill and a decode instance: the KV cache
// moves between them before the first token, in a time that grows with
// the prompt (p's KV model), drawn from rng (not the engine's stream, so
// the engine's requests stay what they are).
func (r *Request) disaggregate(p Profile, rng *rand.Rand) {
	kv := (p.KVBase + p.KVPerToken*float64(r.InputTokens)) * math.Exp(0.3*rng.NormFloat64()-0.3*0.3/2)
	r.KVTransfer += kv
	r.shift(kv)
}

// Engine simulates one model's server: arrivals queue when all slots are
// busy, so queueing grows with load.
type Engine struct {
	P Profile
	// Replica names the engine on its requests.
	Replica string
	rng     *rand.Rand
	slots   []float64 // time (s, arrival clock) each slot frees up
}

// NewEngine returns an engine for p with its own random stream.
func NewEngine(p Profile, seed uint64) *Engine {
	return &Engine{P: p, rng: rand.New(rand.NewPCG(seed, 0x11e55)), slots: make([]float64, p.Slots)}
}

func (e *Engine) lognormal(median, sigma float64) float64 {
	return median * math.Exp(sigma*e.rng.NormFloat64())
}

// meanOne is a lognormal factor with mean 1.
func (e *Engine) meanOne(sigma float64) float64 {
	return math.Exp(sigma*e.rng.NormFloat64() - sigma*sigma/2)
}

// Next generates the request arriving at time at (seconds on the engine's
// clock; arrivals must be non-decreasing).
func (e *Engine) Next(at float64) Request {
	p := e.P
	r := Request{Model: p.Name, Replica: e.Replica}
	r.InputTokens = max(1, int(e.lognormal(p.InputMedian, p.InputSigma)))
	r.OutputTokens = min(p.MaxOutput, max(1, int(e.lognormal(p.OutputMedian, p.OutputSigma))))
	r.Failed = e.rng.Float64() < p.ErrorRate

	// Queue: wait for the earliest free slot.
	i := slices.Index(e.slots, slices.Min(e.slots))
	r.Queue = max(0, e.slots[i]-at)

	prefill := (p.PrefillBase + p.PrefillPerToken*float64(r.InputTokens)) * e.meanOne(0.2)
	if e.rng.Float64() < p.TailProb {
		prefill *= min(p.TailCap, math.Pow(1-e.rng.Float64(), -1/p.TailAlpha))
	}
	tpot := p.TPOT * e.meanOne(p.TPOTSigma)
	stallAt := -1
	if r.OutputTokens > 2 && e.rng.Float64() < p.StallProb {
		stallAt = 1 + e.rng.IntN(r.OutputTokens-1)
	}
	t := r.Queue + prefill
	r.TokenTimes = make([]float64, r.OutputTokens)
	for k := range r.OutputTokens {
		if k > 0 {
			gap := tpot * e.meanOne(p.GapSigma)
			if k == stallAt {
				gap += p.StallMean * e.rng.ExpFloat64()
			}
			t += gap
		}
		r.TokenTimes[k] = t
	}
	e.slots[i] = at + r.E2E()
	return r
}

// Durations converts seconds to a time.Duration, rounding to the ns.
func Durations(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }
