// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package slo

import "fmt"

// QualifiedTTFT says how an SLO takes a TTFT its producer is known to
// measure between the wrong events (a ttft= qualifier in llm.metrics.source:
// Langfuse's and AI SDK 5's first part, OpenLIT's first event).
type QualifiedTTFT string

const (
	// QualifiedKeep judges the producer's TTFT, and the TPOT from it, as
	// they are (the default): the SLO is optimistic on such spans.
	QualifiedKeep QualifiedTTFT = "keep"
	// QualifiedUnknown takes them as unknown: the TTFT and TPOT
	// constraints are <constraint>:unknown on such spans.
	QualifiedUnknown QualifiedTTFT = "unknown"
)

// ParseQualifiedTTFT reads the qualified_ttft setting; empty is the
// default, QualifiedKeep.
func ParseQualifiedTTFT(s string) (QualifiedTTFT, error) {
	switch QualifiedTTFT(s) {
	case "", QualifiedKeep:
		return QualifiedKeep, nil
	case QualifiedUnknown:
		return QualifiedUnknown, nil
	}
	return QualifiedKeep, fmt.Errorf("%q: allowed values are %q (the default: a qualified TTFT is judged as the producer gives it) and %q (a qualified TTFT, and the TPOT from it, are unknown)",
		s, QualifiedKeep, QualifiedUnknown)
}
