// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package assembly

import "fmt"

// Stats is a snapshot of what the assembly keeps.
type Stats struct {
	// Traces with recorded steps, held requests or an engine's view.
	Traces int
	// Steps recorded over all traces.
	Steps int
	// Held request spans, awaiting their steps or the wait.
	Held int
	// Released request spans not yet delivered (refused, awaiting a retry).
	Released int
	// Awaiting batches sent on whose holds wait for the next consumer's
	// answer.
	Awaiting int
}

// Stats returns what the assembly keeps now.
func (a *Assembler) Stats() Stats {
	a.mu.Lock()
	defer a.mu.Unlock()
	return Stats{Traces: len(a.traces), Steps: a.totalSteps, Held: a.totalHeld,
		Released: a.released.SpanCount() + a.refused.SpanCount(), Awaiting: len(a.awaiting)}
}

// Check compares the assembly's counters with the state they count (the
// steps and held spans of every trace, the age list) and with the bounds.
// The counters decide evictions, so a drift would break the bounds
// silently; tests and the fuzz target call it after every step.
func (a *Assembler) Check() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	steps, held := 0, 0
	for id, e := range a.traces {
		switch {
		case id != e.id:
			return fmt.Errorf("trace %v filed under %v", e.id, id)
		case len(e.steps) > a.cfg.MaxStepsPerTrace:
			return fmt.Errorf("trace %v: %d steps, beyond max_steps_per_trace", id, len(e.steps))
		case len(e.held) > a.cfg.MaxHeldPerTrace:
			return fmt.Errorf("trace %v: %d held, beyond max_held_per_trace", id, len(e.held))
		}
		steps += len(e.steps)
		held += len(e.held)
	}
	switch {
	case steps != a.totalSteps:
		return fmt.Errorf("step counter %d, %d steps recorded", a.totalSteps, steps)
	case held != a.totalHeld:
		return fmt.Errorf("held counter %d, %d spans held", a.totalHeld, held)
	case len(a.traces) != a.byAge.Len():
		return fmt.Errorf("age list of %d, %d traces", a.byAge.Len(), len(a.traces))
	case a.totalSteps > a.cfg.MaxSteps, a.totalHeld > a.cfg.MaxHeld, len(a.traces) > a.cfg.MaxTraces:
		return fmt.Errorf("beyond the bounds: %d steps, %d held, %d traces", a.totalSteps, a.totalHeld, len(a.traces))
	}
	return nil
}
