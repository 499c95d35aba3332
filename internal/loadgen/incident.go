// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"fmt"
	"time"
)

// Incident slows one model's first token from a point of the run on: the
// request's TTFT is multiplied by Factor and every later token is shifted
// by the same amount, so TPOT and ITL keep their values (a prefill or
// queueing incident, the kind a TTFT constraint catches).
type Incident struct {
	Model  string        // the model profile affected
	After  time.Duration // from this long after the first arrival
	Factor float64       // TTFT multiplier, > 1
}

// Check validates the incident against the run's models.
func (i *Incident) Check(models map[string]float64) error {
	if _, ok := models[i.Model]; !ok {
		return fmt.Errorf("incident model %q is not one of the run's models", i.Model)
	}
	if !(i.Factor > 0) || i.After < 0 {
		return fmt.Errorf("incident: factor %v must be positive and start %v not negative", i.Factor, i.After)
	}
	return nil
}

// apply slows r if it arrives at or after the incident's start (at is the
// arrival, seconds since the first).
func (i *Incident) apply(r *Request, at float64) {
	if i == nil || r.Model != i.Model || at < i.After.Seconds() {
		return
	}
	shift := r.TTFT() * (i.Factor - 1)
	for k := range r.TokenTimes {
		r.TokenTimes[k] += shift
	}
}
