// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// IncidentKind is what an incident does to the requests it affects.
type IncidentKind string

const (
	// IncidentTTFT multiplies the TTFT by Factor and shifts every later
	// token by the same amount (TPOT and ITL unchanged): the added time
	// is prefill on the engine's span (first token - scheduled). The
	// default ("" is this kind).
	IncidentTTFT IncidentKind = "ttft"
	// IncidentQueue adds Delay to the queue time: TTFT grows by queueing,
	// prefill and decode stay.
	IncidentQueue IncidentKind = "queue"
	// IncidentLongPrompt multiplies the input tokens by Factor; prefill
	// grows with them by the profile's per-token cost (keeping the
	// request's own noise and tail factor), queue and decode stay.
	IncidentLongPrompt IncidentKind = "long_prompt"
	// IncidentNetwork adds Delay between the client and the engine: a
	// client span's TTFT and E2E grow, the engine's spans do not change.
	IncidentNetwork IncidentKind = "network"
)

// IncidentKinds lists every kind, the default first.
var IncidentKinds = []IncidentKind{IncidentTTFT, IncidentQueue, IncidentLongPrompt, IncidentNetwork}

// Cause is the part of the latency the kind adds to, in the words of the
// processor's miss causes: prefill, queue or network.
func (k IncidentKind) Cause() string {
	switch k {
	case IncidentQueue:
		return "queue"
	case IncidentNetwork:
		return "network"
	default:
		return "prefill"
	}
}

// usesDelay says whether the kind reads Delay (else Factor).
func (k IncidentKind) usesDelay() bool { return k == IncidentQueue || k == IncidentNetwork }

// ParseIncidentKind reads a kind's name.
func ParseIncidentKind(s string) (IncidentKind, error) {
	for _, k := range IncidentKinds {
		if string(k) == s {
			return k, nil
		}
	}
	names := make([]string, len(IncidentKinds))
	for i, k := range IncidentKinds {
		names[i] = string(k)
	}
	return "", fmt.Errorf("unknown incident kind %q: known are %s", s, strings.Join(names, ", "))
}

// Incident changes one model's requests from a point of the run on (those
// arriving at or after After); Kind says how.
type Incident struct {
	Model  string        // the model profile affected
	After  time.Duration // from this long after the first arrival
	Factor float64       // ttft: TTFT multiplier; long_prompt: input-token multiplier; > 0
	// Kind is what the incident does; "" is IncidentTTFT.
	Kind IncidentKind
	// Delay is the time queue and network incidents add, > 0.
	Delay time.Duration
}

func (i *Incident) kind() IncidentKind {
	if i.Kind == "" {
		return IncidentTTFT
	}
	return i.Kind
}

// Check validates the incident against the run's models.
func (i *Incident) Check(models map[string]float64) error {
	if _, ok := models[i.Model]; !ok {
		return fmt.Errorf("incident model %q is not one of the run's models", i.Model)
	}
	k, err := ParseIncidentKind(string(i.kind()))
	if err != nil {
		return fmt.Errorf("incident: %w", err)
	}
	if i.After < 0 {
		return fmt.Errorf("incident: start %v must not be negative", i.After)
	}
	if k.usesDelay() && i.Delay <= 0 {
		return fmt.Errorf("incident %s: delay %v must be positive", k, i.Delay)
	}
	if !k.usesDelay() && !(i.Factor > 0) {
		return fmt.Errorf("incident %s: factor %v must be positive", k, i.Factor)
	}
	return nil
}

// apply changes r if it arrives at or after the incident's start (at is
// the arrival, seconds since the first). It draws no random numbers.
func (i *Incident) apply(r *Request, at float64) {
	if i == nil || r.Model != i.Model || at < i.After.Seconds() {
		return
	}
	r.Incident = i.kind()
	switch r.Incident {
	case IncidentQueue:
		d := i.Delay.Seconds()
		r.Queue += d
		r.shift(d)
	case IncidentLongPrompt:
		longer := max(1, int(math.Round(float64(r.InputTokens)*i.Factor)))
		prefill := r.Prefill()
		r.shift(prefill*prefillScale(Profiles[r.Model], r.InputTokens, longer) - prefill)
		r.InputTokens = longer
	case IncidentNetwork:
		r.ClientDelay += i.Delay.Seconds()
	default:
		r.shift(r.TTFT() * (i.Factor - 1))
	}
}

// prefillScale is how much longer p's prefill of `to` input tokens takes
// than of `from` (1 for a profile without a prefill model).
func prefillScale(p Profile, from, to int) float64 {
	base := p.PrefillBase + p.PrefillPerToken*float64(from)
	if !(base > 0) {
		return 1
	}
	return (p.PrefillBase + p.PrefillPerToken*float64(to)) / base
}
