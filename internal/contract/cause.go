// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package contract

import "strings"

// Cause is why a request failed one SLO constraint, from a closed set
// (llm.slo.<name>.causes). The rule that picks it is internal/slo's
// (attribution.go); the names are here, with the constraint names, so that
// the connector's llm.slo.cause label and the report read the same words.
type Cause uint8

// The causes, in the order the README lists them.
const (
	// CauseQueue: waiting in the engine's queue (capacity).
	CauseQueue Cause = iota
	// CausePrefill: the engine's prefill (long prompts, no prefix cache).
	CausePrefill
	// CauseKVTransfer: moving the KV cache from a prefill to a decode
	// worker (disaggregated serving).
	CauseKVTransfer
	// CauseNetwork: the path between the client and the engine (client
	// TTFT - engine TTFT): network, gateway, routing.
	CauseNetwork
	// CauseDecode: the time per output token.
	CauseDecode
	// CauseOutputLength: the answer was too long for the budget at a
	// healthy pace: the SLO does not fit long outputs.
	CauseOutputLength
	// CauseUnattributed: no part is known, or the known parts explain less
	// than half of the miss.
	CauseUnattributed
	// NumCauses is the number of causes.
	NumCauses
)

var causeNames = [NumCauses]string{"queue", "prefill", "kv_transfer", "network", "decode", "output_length", "unattributed"}

func (c Cause) String() string { return causeNames[c] }

// CauseNames lists the cause names in order.
func CauseNames() []string { return causeNames[:] }

// causeEntries[i][c] is "<Constraints[i]>:<c>", built once: writing a cause
// never concatenates strings.
var causeEntries = func() (t [NumConstraints][NumCauses]string) {
	for i, name := range Constraints {
		for c := range NumCauses {
			t[i][c] = name + ":" + c.String()
		}
	}
	return t
}()

// CauseEntry is the llm.slo.<name>.causes entry of constraint i (an index
// into Constraints) failed for cause c, e.g. "ttft:queue".
func CauseEntry(i int, c Cause) string { return causeEntries[i][c] }

// ParseCauseEntry reads a causes entry back: the constraint's index into
// Constraints and the cause. Anything outside the closed vocabulary is not
// ok, so a reader that labels by it (the connector's llm.slo.cause) cannot
// be made to grow a series by a forged word. It does not allocate.
func ParseCauseEntry(s string) (constraint int, c Cause, ok bool) {
	name, cause, found := strings.Cut(s, ":")
	if !found {
		return 0, 0, false
	}
	constraint = -1
	for i, n := range Constraints {
		if n == name {
			constraint = i
			break
		}
	}
	if constraint < 0 {
		return 0, 0, false
	}
	for j, n := range causeNames {
		if n == cause {
			return constraint, Cause(j), true
		}
	}
	return 0, 0, false
}
