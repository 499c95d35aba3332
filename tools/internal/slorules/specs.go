// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package slorules

import (
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/llmslo/llmslo/internal/promtime"
	"github.com/llmslo/llmslo/tools/internal/promname"
)

// SlothSpec is a Sloth prometheus/v1 spec (github.com/slok/sloth,
// pkg/prometheus/api/v1).
type SlothSpec struct {
	Version string            `yaml:"version"`
	Service string            `yaml:"service"`
	Labels  map[string]string `yaml:"labels,omitempty"`
	SLOs    []SlothSLO        `yaml:"slos"`
}

// SlothSLO is one SLO of a Sloth spec.
type SlothSLO struct {
	Name        string            `yaml:"name"`
	Objective   float64           `yaml:"objective"`
	Description string            `yaml:"description,omitempty"`
	Labels      map[string]string `yaml:"labels,omitempty"`
	SLI         struct {
		Events struct {
			ErrorQuery string `yaml:"error_query"`
			TotalQuery string `yaml:"total_query"`
		} `yaml:"events"`
	} `yaml:"sli"`
	Alerting SlothAlerting `yaml:"alerting"`
}

// SlothAlerting is a Sloth SLO's alerting block.
type SlothAlerting struct {
	Name        string            `yaml:"name"`
	Labels      map[string]string `yaml:"labels,omitempty"`
	Annotations map[string]string `yaml:"annotations,omitempty"`
	PageAlert   SlothAlert        `yaml:"page_alert"`
	TicketAlert SlothAlert        `yaml:"ticket_alert"`
}

// SlothAlert is the page or ticket alert of a Sloth SLO.
type SlothAlert struct {
	Labels      map[string]string `yaml:"labels,omitempty"`
	Annotations map[string]string `yaml:"annotations,omitempty"`
}

// SlothPeriod is the SLOs of one period: Sloth takes the period per run
// (sloth generate --default-slo-period), not per SLO.
type SlothPeriod struct {
	Period time.Duration
	Spec   SlothSpec
}

// Sloth gives the Sloth specs equivalent to Prometheus's output (without
// the minimum-traffic guard and the window divisor, which Sloth has not),
// one per period, shortest period first.
func Sloth(slos []SLO, o Options) []SlothPeriod {
	byPeriod := map[time.Duration][]SlothSLO{}
	for i := range slos {
		s := &slos[i]
		x := SlothSLO{Name: s.Name, Objective: s.Objective, Description: s.Description,
			Labels: map[string]string{promname.LabelSLOName: s.Name}}
		x.SLI.Events.ErrorQuery = s.ErrorQuery("{{.window}}", o.Matchers)
		x.SLI.Events.TotalQuery = s.TotalQuery("{{.window}}", o.Matchers)
		top := func(a Alert) string { return s.topCause(a.Quick.Short, promtime.Format(a.Quick.Short), o.Matchers) }
		page, ticket := alertingAnnotations(s, Windows[0], top(Windows[0])), alertingAnnotations(s, Windows[1], top(Windows[1]))
		x.Alerting = SlothAlerting{
			Name:        AlertName,
			Labels:      map[string]string{promname.LabelSLOName: s.Name},
			Annotations: map[string]string{"summary": page["summary"]},
			PageAlert: SlothAlert{Labels: map[string]string{"severity": "page"},
				Annotations: map[string]string{"description": page["description"]}},
			TicketAlert: SlothAlert{Labels: map[string]string{"severity": "ticket"},
				Annotations: map[string]string{"description": ticket["description"]}},
		}
		byPeriod[s.Period] = append(byPeriod[s.Period], x)
	}
	var out []SlothPeriod
	for p, list := range byPeriod {
		out = append(out, SlothPeriod{Period: p, Spec: SlothSpec{Version: "prometheus/v1", Service: o.service(), SLOs: list}})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Period < out[j].Period })
	return out
}

// PyrraSLO is a Pyrra ServiceLevelObjective (pyrra.dev/v1alpha1). The
// counters fit its "latency" indicator, which is success / total events
// (no le bucket: the verdict is already per request).
type PyrraSLO struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name   string            `yaml:"name"`
		Labels map[string]string `yaml:"labels,omitempty"`
	} `yaml:"metadata"`
	Spec struct {
		Description string `yaml:"description"`
		Target      string `yaml:"target"`
		Window      string `yaml:"window"`
		Indicator   struct {
			Latency struct {
				Success struct {
					Metric string `yaml:"metric"`
				} `yaml:"success"`
				Total struct {
					Metric string `yaml:"metric"`
				} `yaml:"total"`
			} `yaml:"latency"`
		} `yaml:"indicator"`
		Alerting struct {
			Name string `yaml:"name"`
		} `yaml:"alerting"`
	} `yaml:"spec"`
}

// Pyrra gives one Pyrra SLO per SLO. Pyrra derives its own windows and
// factors from the period (scaled from 28 days). An SLO that excludes
// unknown verdicts is refused: its denominator, met + violated, is a sum of
// two counters, and every Pyrra indicator takes one metric per side, so
// the spec would silently count unknown verdicts as bad.
func Pyrra(slos []SLO, o Options) ([]PyrraSLO, error) {
	var out []PyrraSLO
	for i := range slos {
		s := &slos[i]
		if s.ExcludeUnknown {
			return nil, fmt.Errorf("SLO %s: unknown_verdicts: exclude cannot be written for Pyrra: its indicators take one total metric, "+
				"and the decidable requests are two (met + violated); use --format prometheus, sloth or openslo, or unknown_verdicts: bad", s.Name)
		}
		var p PyrraSLO
		p.APIVersion, p.Kind = "pyrra.dev/v1alpha1", "ServiceLevelObjective"
		p.Metadata.Name = pyrraName(o.ID(s))
		p.Metadata.Labels = map[string]string{promname.LabelSLOName: s.Name}
		p.Spec.Description = s.Description
		p.Spec.Target = strconv.FormatFloat(s.Objective, 'f', -1, 64)
		p.Spec.Window = promtime.Format(s.Period)
		p.Spec.Indicator.Latency.Success.Metric = s.selector(promname.SLOMet, o.Matchers)
		p.Spec.Indicator.Latency.Total.Metric = s.selector(promname.SLORequests, o.Matchers)
		p.Spec.Alerting.Name = AlertName
		out = append(out, p)
	}
	return out, nil
}

// pyrraName is a Kubernetes object name: lower case, digits and '-'.
func pyrraName(id string) string {
	b := []byte(id)
	for i, c := range b {
		if c == '_' {
			b[i] = '-'
		}
	}
	return string(b)
}

// OpenSLO documents (openslo/v1): a Service, then one SLO per SLO.
type OpenSLO struct {
	APIVersion string         `yaml:"apiVersion"`
	Kind       string         `yaml:"kind"`
	Metadata   OpenSLOMeta    `yaml:"metadata"`
	Spec       map[string]any `yaml:"spec"`
}

// OpenSLOMeta is an OpenSLO object's metadata.
type OpenSLOMeta struct {
	Name        string            `yaml:"name"`
	DisplayName string            `yaml:"displayName,omitempty"`
	Labels      map[string]string `yaml:"labels,omitempty"`
}

// OpenSLOs gives the service and its SLOs as OpenSLO v1: a ratio metric
// of counters (good = met, total = requests, or met + violated for an SLO
// that excludes unknown verdicts), rolling over the period, budgeted by
// occurrences.
func OpenSLOs(slos []SLO, o Options) []OpenSLO {
	svc := pyrraName(o.service())
	out := []OpenSLO{{APIVersion: "openslo/v1", Kind: "Service", Metadata: OpenSLOMeta{Name: svc},
		Spec: map[string]any{"description": "LLM requests judged by the llm_slo processor"}}}
	source := func(q string) map[string]any {
		return map[string]any{"metricSource": map[string]any{"type": "Prometheus", "spec": map[string]any{"query": q}}}
	}
	for i := range slos {
		s := &slos[i]
		out = append(out, OpenSLO{
			APIVersion: "openslo/v1", Kind: "SLO",
			Metadata: OpenSLOMeta{Name: pyrraName(o.ID(s)), DisplayName: s.Name, Labels: map[string]string{promname.LabelSLOName: s.Name}},
			Spec: map[string]any{
				"description": s.Description,
				"service":     svc,
				"indicator": map[string]any{
					"metadata": map[string]any{"name": pyrraName(o.ID(s)) + "-goodput"},
					"spec": map[string]any{"ratioMetric": map[string]any{
						"counter": true,
						"good":    source(fmt.Sprintf("sum(%s)", s.selector(promname.SLOMet, o.Matchers))),
						"total":   source(s.openSLOTotal(o.Matchers)),
					}},
				},
				"timeWindow":      []any{map[string]any{"duration": promtime.Format(s.Period), "isRolling": true}},
				"budgetingMethod": "Occurrences",
				"objectives":      []any{map[string]any{"displayName": s.Description, "target": s.Objective / 100}},
			},
		})
	}
	return out
}

// openSLOTotal is the total side of the OpenSLO ratio: the selected
// requests, or the decidable ones (a sum of the met and violated counters,
// which reset together: the connector emits both from one series).
func (s *SLO) openSLOTotal(extra []string) string {
	if s.ExcludeUnknown {
		return fmt.Sprintf("sum(%s) + sum(%s)", s.selector(promname.SLOMet, extra), s.selector(promname.SLOViolated, extra))
	}
	return fmt.Sprintf("sum(%s)", s.selector(promname.SLORequests, extra))
}
