// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

// Package promname maps the connector's OTLP metric and attribute names to
// the names Prometheus shows once the contrib Prometheus exporter (or
// Prometheus's own OTLP receiver) has translated them: dots become
// underscores, the unit becomes a suffix (s: _seconds; 1 on a gauge:
// _ratio; annotations such as {request} are dropped) and counters end in
// _total. The e2e tests check these names against a real Prometheus.
package promname

import (
	"strings"

	"github.com/llmslo/llmslo/internal/catalog"
)

// units maps UCUM units to the Prometheus suffix, as the exporter's
// translator (prometheus/otlptranslator) does for the units the connector
// uses.
var units = map[string]string{
	"s": "seconds", "ms": "milliseconds", "us": "microseconds", "ns": "nanoseconds",
	"By": "bytes", "min": "minutes", "h": "hours", "d": "days",
}

// Metric is the Prometheus name of m. A histogram's name is its native
// histogram's; classic histograms add _bucket, _sum and _count.
func Metric(m catalog.Metric) string {
	name := Label(m.Name)
	var suffix string
	switch {
	case m.Unit == "1" && m.Type == catalog.Gauge:
		suffix = "ratio"
	case strings.HasPrefix(m.Unit, "{"):
	default:
		suffix = units[m.Unit]
	}
	if suffix != "" && !strings.HasSuffix(name, "_"+suffix) {
		name += "_" + suffix
	}
	if m.Type == catalog.Counter {
		name += "_total"
	}
	return name
}

// Label is the Prometheus name of an attribute key: every character
// outside [a-zA-Z0-9_] becomes an underscore, and a leading digit is
// prefixed with one ("llm.slo.name" is "llm_slo_name").
func Label(key string) string {
	var b strings.Builder
	for i, r := range key {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r == '_':
			b.WriteRune(r)
		case r >= '0' && r <= '9':
			if i == 0 {
				b.WriteString("key_")
			}
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// The Prometheus names of the connector's SLO counters and of the labels
// that tell an SLO's series apart: what the rules and the dashboard
// query, spelled here once.
var (
	SLORequests   = Metric(catalog.SLORequests)
	SLOMet        = Metric(catalog.SLOMet)
	SLOViolated   = Metric(catalog.SLOViolated)
	SLOUnknown    = Metric(catalog.SLOUnknown)
	SLOTokensMet  = Metric(catalog.SLOTokensMet)
	SLOViolations = Metric(catalog.SLOViolations)
	// SLOWeighted and SLOWeightedSpans: the requests counted from sampled
	// spans (adjusted count above 1), and those spans.
	SLOWeighted      = Metric(catalog.SLOWeighted)
	SLOWeightedSpans = Metric(catalog.SLOWeightedSpans)
	// LabelSLOName is the SLO's name on every series of the SLO.
	LabelSLOName = Label(catalog.AttrSLOName)
	// LabelSLOConstraint is the failed or unknown constraint on
	// SLOViolations.
	LabelSLOConstraint = Label(catalog.AttrSLOConstraint)
	// LabelSLOCause is the cause of a failed latency constraint on
	// SLOViolations (absent where there is none).
	LabelSLOCause = Label(catalog.AttrSLOCause)
)
