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

	llmsloprocessor "github.com/llmslo/llmslo"
	"github.com/llmslo/llmslo/internal/collectorconfig"
	"github.com/llmslo/llmslo/internal/contract"
	"github.com/llmslo/llmslo/internal/promname"
	"github.com/llmslo/llmslo/internal/promtime"
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

// FromProcessors lists the SLOs with an objective, in configuration order.
// The connector's metrics carry the SLO name only, so a name used by two
// processors is an error.
func FromProcessors(procs []collectorconfig.Processor) ([]SLO, error) {
	var out []SLO
	seen := map[string]string{}
	for _, p := range procs {
		for _, s := range p.Config.SLOs {
			if prev, ok := seen[s.Name]; ok {
				return nil, fmt.Errorf("SLO %q is defined by both %s and %s: the connector's metrics tell SLOs apart by name only", s.Name, prev, p.ID)
			}
			seen[s.Name] = p.ID.String()
			if s.Objective == nil {
				continue
			}
			period, err := promtime.ParsePeriod(s.Period)
			if err != nil { // Load validated it already
				return nil, fmt.Errorf("%s: SLO %s: period: %w", p.ID, s.Name, err)
			}
			out = append(out, SLO{
				Name: s.Name, Processor: p.ID.String(), Objective: *s.Objective, Period: period,
				Description: describe(&s), LayerLabel: promname.Label(p.Config.AttributePrefix + contract.SuffixLayer),
				Layer: s.Selector.Layer, ExcludeUnknown: s.ExcludesUnknown(),
			})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no SLO has an objective: add one, e.g. objective: 99 beside the thresholds")
	}
	return out, nil
}

func describe(s *llmsloprocessor.SLOConfig) string {
	var parts []string
	for _, t := range []struct {
		name string
		d    *time.Duration
	}{{"TTFT", s.TTFT}, {"TPOT", s.TPOT}, {"ITL", s.ITL}, {"E2E", s.E2E}, {"queue time", s.QueueTime}} {
		if t.d != nil {
			parts = append(parts, fmt.Sprintf("%s <= %v", t.name, *t.d))
		}
	}
	desc := strings.Join(parts, " AND ")
	if sel := s.Selector.Describe(); sel != "" {
		desc += " (" + sel + ")"
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
