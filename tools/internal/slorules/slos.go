// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

// Package slorules turns the objectives of a collector configuration's
// llm_slo processors into what SREs run: Prometheus recording rules and
// multi-window multi-burn-rate alerts named as Sloth names them, and the
// equivalent Sloth, Pyrra and OpenSLO specs.
//
// The SLI of an SLO is the processor's verdict, counted by the connector:
// error ratio = 1 - met / requests, each counter summed over every series
// of the SLO (every model, layer, dimension and collector replica), so
// collector.instance.id never splits an SLO. Unknown verdicts are not met;
// an SLO with unknown_verdicts: exclude leaves them out of both sides:
// error ratio = violated / (met + violated).
package slorules

import (
	"fmt"
	"strings"
	"time"

	"github.com/llmslo/llmslo/internal/contract"
	"github.com/llmslo/llmslo/internal/slo"
	"github.com/llmslo/llmslo/tools/internal/promname"
)

// SLO is one objective of the configuration.
type SLO struct {
	// Name is the SLO's name, the connector's llm.slo.name.
	Name string
	// Processor is the ID of the processor that judges it.
	Processor string
	// Objective is the target share of good requests, in percent.
	Objective float64
	// Period is the compliance window.
	Period time.Duration
	// Description says what a good request is, from the thresholds and the
	// selector ("TTFT <= 500ms AND TPOT <= 15ms AND E2E <= 2s").
	Description string
	// LayerLabel is the Prometheus label of the layer dimension
	// ("llm_layer" under the default attribute_prefix).
	LayerLabel string
	// Layer is the selector's layer ("" for both).
	Layer string
	// ExcludeUnknown leaves undecidable verdicts out of the SLI
	// (unknown_verdicts: exclude): its denominator is the decidable
	// requests, met + violated.
	ExcludeUnknown bool
}

// Processor is one llm_slo processor's SLOs, as the processor's
// configuration defines them.
type Processor struct {
	// ID is the component ID as written: "llm_slo" or "llm_slo/<name>".
	ID string
	// AttributePrefix is its attribute_prefix, which names the layer label.
	AttributePrefix string
	SLOs            []slo.Definition
}

// Config is what the rules read of a processor's configuration. The
// llm_slo processor's Config implements it; taking it through an interface
// keeps this package from importing the processor.
type Config interface {
	// Prefix is the attribute_prefix.
	Prefix() string
	SLODefinitions() []slo.Definition
}

// NewProcessor is the processor id (as written: "llm_slo/edge") with its
// validated configuration cfg.
func NewProcessor(id string, cfg Config) Processor {
	return Processor{ID: id, AttributePrefix: cfg.Prefix(), SLOs: cfg.SLODefinitions()}
}

// FromProcessors lists the SLOs with an objective, in configuration order.
// The connector's metrics carry the SLO name only, so a name used by two
// processors is an error.
func FromProcessors(procs []Processor) ([]SLO, error) {
	var out []SLO
	seen := map[string]string{}
	for _, p := range procs {
		for i := range p.SLOs {
			d := &p.SLOs[i]
			if prev, ok := seen[d.Name]; ok {
				return nil, fmt.Errorf("SLO %q is defined by both %s and %s: the connector's metrics tell SLOs apart by name only", d.Name, prev, p.ID)
			}
			seen[d.Name] = p.ID
			if d.Objective == 0 {
				continue
			}
			out = append(out, SLO{
				Name: d.Name, Processor: p.ID, Objective: d.Objective, Period: d.Period,
				Description: describe(d), LayerLabel: promname.Label(p.AttributePrefix + contract.SuffixLayer),
				Layer: d.Layer, ExcludeUnknown: d.ExcludeUnknown,
			})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no SLO has an objective: add one, e.g. objective: 99 beside the thresholds")
	}
	return out, nil
}

// boundNames are the constraints as descriptions name them.
var boundNames = map[string]string{slo.TTFT: "TTFT", slo.TPOT: "TPOT", slo.ITL: "ITL", slo.E2E: "E2E", slo.QueueTime: "queue time"}

func describe(d *slo.Definition) string {
	parts := make([]string, 0, len(d.Bounds))
	for _, b := range d.Bounds {
		name, ok := boundNames[b.Constraint]
		if !ok { // a constraint newer than this list reads by its id
			name = b.Constraint
		}
		parts = append(parts, fmt.Sprintf("%s <= %v", name, b.Max))
	}
	desc := strings.Join(parts, " AND ")
	if d.Selection != "" {
		desc += " (" + d.Selection + ")"
	}
	return desc
}

// Selector is the series selector of the SLO's counters, with the extra
// matchers (e.g. `deployment_environment_name="prod"`) inside the braces.
func (s *SLO) selector(metric string, extra []string) string {
	m := append([]string{fmt.Sprintf("%s=%q", promname.LabelSLOName, s.Name)}, extra...)
	return metric + "{" + strings.Join(m, ",") + "}"
}

// ErrorQuery is the rate of requests that did not meet the SLO over
// window, summed across every series and replica: violated or unknown, or
// only violated when the SLO excludes unknown verdicts. window may be
// Sloth's template variable "{{.window}}".
func (s *SLO) ErrorQuery(window string, extra []string) string {
	if s.ExcludeUnknown {
		return fmt.Sprintf("sum(rate(%s[%s]))", s.selector(promname.SLOViolated, extra), window)
	}
	return fmt.Sprintf("sum(rate(%s[%s])) - sum(rate(%s[%s]))",
		s.selector(promname.SLORequests, extra), window, s.selector(promname.SLOMet, extra), window)
}

// TotalQuery is the rate of the SLI's denominator over window: the
// requests the SLO selected, or its decidable ones (met + violated) when it
// excludes unknown verdicts.
func (s *SLO) TotalQuery(window string, extra []string) string {
	if s.ExcludeUnknown {
		return fmt.Sprintf("sum(rate(%s[%s])) + sum(rate(%s[%s]))",
			s.selector(promname.SLOMet, extra), window, s.selector(promname.SLOViolated, extra), window)
	}
	return fmt.Sprintf("sum(rate(%s[%s]))", s.selector(promname.SLORequests, extra), window)
}

// Denominator names the SLI's denominator for titles and descriptions.
func (s *SLO) Denominator() string {
	if s.ExcludeUnknown {
		return "decidable requests (met + violated; unknown verdicts excluded)"
	}
	return "requests (unknown verdicts count as not met)"
}

// GoodQuery is the rate of requests that met the SLO over window.
func (s *SLO) GoodQuery(window string, extra []string) string {
	return fmt.Sprintf("sum(rate(%s[%s]))", s.selector(promname.SLOMet, extra), window)
}
