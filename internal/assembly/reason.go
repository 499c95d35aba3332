// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package assembly

// Reason is why the assembly dropped state or gave spans up: the reason
// attribute of otelcol_processor_llm_slo_assembly_evictions.
type Reason uint8

// The reasons, in the order the metric's documentation lists them.
const (
	// EvictTraces: max_traces (or max_steps) evicted the oldest trace.
	EvictTraces Reason = iota
	// EvictStepsPerTrace: a trace's steps beyond max_steps_per_trace.
	EvictStepsPerTrace
	// EvictOrphanSteps: steps whose request never arrived.
	EvictOrphanSteps
	// EvictHeld: a request span not held, max_held being reached.
	EvictHeld
	// EvictHeldPerTrace: a request span not held, its trace's
	// max_held_per_trace being reached.
	EvictHeldPerTrace
	// EvictRefused: held spans refused permanently downstream.
	EvictRefused
	// EvictRetryFull: held spans refused while max_held refused spans wait.
	EvictRetryFull
	// EvictRefusedAtShutdown: held spans refused at shutdown.
	EvictRefusedAtShutdown
	// NumReasons is the number of reasons.
	NumReasons
)

var reasonNames = [NumReasons]string{"max_traces", "max_steps_per_trace", "request_never_arrived", "max_held",
	"max_held_per_trace", "refused_downstream", "retry_full", "refused_at_shutdown"}

// String is the reason as the metric's attribute spells it.
func (r Reason) String() string {
	if r < NumReasons {
		return reasonNames[r]
	}
	return "unknown"
}
