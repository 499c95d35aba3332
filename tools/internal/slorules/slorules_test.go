// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package slorules

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/llmslo/llmslo/internal/promtime"
	"github.com/llmslo/llmslo/internal/slo"
)

// ms is a threshold of n milliseconds on constraint c.
func ms(c string, n int) slo.Bound {
	return slo.Bound{Constraint: c, Max: time.Duration(n) * time.Millisecond}
}

// llmSLO is the processor llm_slo with the default attribute_prefix.
func llmSLO(defs ...slo.Definition) Processor {
	return Processor{ID: "llm_slo", AttributePrefix: "llm.", SLOs: defs}
}

// slosOf lists the SLOs of procs, which must have some with an objective.
func slosOf(t *testing.T, procs ...Processor) []SLO {
	t.Helper()
	slos, err := FromProcessors(procs)
	require.NoError(t, err)
	return slos
}

// twoProcessors are two processors' SLOs as their configurations define
// them (the processor's TestSLODefinitions checks that half): one without
// an objective, one under another attribute_prefix with a selector.
var twoProcessors = []Processor{
	llmSLO(
		slo.Definition{Name: "interactive", Objective: 99, Period: 30 * promtime.Day,
			Bounds: []slo.Bound{ms(slo.TTFT, 500), ms(slo.TPOT, 15), ms(slo.E2E, 2000)}},
		slo.Definition{Name: "no_objective", Period: 30 * promtime.Day, Bounds: []slo.Bound{ms(slo.E2E, 30000)}},
	),
	{ID: "llm_slo/engine", AttributePrefix: "x.", SLOs: []slo.Definition{{
		Name: "engine_queue", Objective: 99.9, Period: 28 * promtime.Day, Bounds: []slo.Bound{ms(slo.QueueTime, 100)},
		Selection: "layer server; models m1, m2", Layer: "server",
	}}},
}

func TestFromProcessors(t *testing.T) {
	slos := slosOf(t, twoProcessors...)
	require.Len(t, slos, 2, "the SLO without an objective has no rules")
	assert.Equal(t, SLO{Name: "interactive", Processor: "llm_slo", Objective: 99, Period: 30 * promtime.Day,
		Description: "TTFT <= 500ms AND TPOT <= 15ms AND E2E <= 2s", LayerLabel: "llm_layer"}, slos[0])
	assert.Equal(t, SLO{Name: "engine_queue", Processor: "llm_slo/engine", Objective: 99.9, Period: 28 * promtime.Day,
		Description: "queue time <= 100ms (layer server; models m1, m2)", LayerLabel: "x_layer", Layer: "server"}, slos[1])

	chat := func(id string, objective float64) Processor {
		return Processor{ID: id, AttributePrefix: "llm.", SLOs: []slo.Definition{{Name: "chat", Objective: objective, Bounds: []slo.Bound{ms(slo.TTFT, 1000)}}}}
	}
	_, err := FromProcessors([]Processor{chat("llm_slo/a", 99), chat("llm_slo/b", 0)})
	assert.ErrorContains(t, err, `SLO "chat" is defined by both llm_slo/a and llm_slo/b`)
	_, err = FromProcessors([]Processor{chat("llm_slo", 0)})
	assert.ErrorContains(t, err, "no SLO has an objective")
}

func TestFactors(t *testing.T) {
	var got [][4]float64
	for _, p := range []time.Duration{30 * promtime.Day, 28 * promtime.Day} {
		got = append(got, [4]float64{Windows[0].Quick.Factor(p), Windows[0].Slow.Factor(p), Windows[1].Quick.Factor(p), Windows[1].Slow.Factor(p)})
	}
	// The Google SRE workbook's 30-day factors; 28 days scale them by 28/30.
	assert.Equal(t, [4]float64{14.4, 6, 3, 1}, got[0])
	assert.InDeltaSlice(t, []float64{13.44, 5.6, 2.8, 0.9333333}, got[1][:], 1e-6)
}

func rulesOf(t *testing.T, f *RuleFile) map[string]Rule {
	out := map[string]Rule{}
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			key := g.Name + " " + r.Record + r.Alert + " " + r.Labels["severity"]
			_, dup := out[key]
			require.False(t, dup, key)
			out[key] = r
		}
	}
	return out
}

func TestPrometheus(t *testing.T) {
	slos := slosOf(t, twoProcessors...)
	f, err := Prometheus(slos, Options{})
	require.NoError(t, err)
	require.Len(t, f.Groups, 6)
	rules := rulesOf(t, f)
	var names []string
	for _, r := range f.Groups[0].Rules {
		names = append(names, r.Record)
		window := r.Record[strings.LastIndex(r.Record, "rate")+len("rate"):]
		assert.Equal(t, map[string]string{"sloth_id": "llmslo-interactive", "sloth_service": "llmslo", "sloth_slo": "interactive",
			"llm_slo_name": "interactive", "sloth_window": window}, r.Labels)
	}
	assert.Equal(t, []string{"slo:sli_error:ratio_rate5m", "slo:sli_error:ratio_rate30m", "slo:sli_error:ratio_rate1h",
		"slo:sli_error:ratio_rate2h", "slo:sli_error:ratio_rate6h", "slo:sli_error:ratio_rate1d", "slo:sli_error:ratio_rate3d",
		"slo:sli_error_events:rate5m", "slo:sli_total_events:rate5m", "slo:sli_error:ratio_rate30d"}, names)
	// The 28-day period is "4w", as Sloth writes it.
	assert.Equal(t, "slo:sli_error:ratio_rate4w", f.Groups[3].Rules[9].Record)
	// The period's ratio is bad / all requests over it, not a mean of ratios.
	period := rules["sloth-slo-sli-recordings-llmslo-interactive slo:sli_error:ratio_rate30d "]
	assert.Equal(t, `sum_over_time(slo:sli_error_events:rate5m{sloth_id="llmslo-interactive", sloth_service="llmslo", sloth_slo="interactive"}[30d])
/
sum_over_time(slo:sli_total_events:rate5m{sloth_id="llmslo-interactive", sloth_service="llmslo", sloth_slo="interactive"}[30d])
`, period.Expr)

	sli := rules["sloth-slo-sli-recordings-llmslo-interactive slo:sli_error:ratio_rate5m "]
	assert.Equal(t, `(sum(rate(llm_slo_requests_total{llm_slo_name="interactive"}[5m])) - sum(rate(llm_slo_requests_met_total{llm_slo_name="interactive"}[5m])))
/
(sum(rate(llm_slo_requests_total{llm_slo_name="interactive"}[5m])))
`, sli.Expr, "summed over every series: collector_instance_id never splits the SLO")
	assert.NotContains(t, sli.Expr, "collector_instance_id")

	meta := map[string]string{}
	for _, r := range f.Groups[4].Rules {
		meta[r.Record] = r.Expr
	}
	assert.Equal(t, "vector(0.999)", meta["slo:objective:ratio"])
	assert.Equal(t, "vector(1-0.999)", meta["slo:error_budget:ratio"])
	assert.Equal(t, "vector(28)", meta["slo:time_period:days"])
	assert.Contains(t, meta["slo:period_burn_rate:ratio"], "slo:sli_error:ratio_rate4w{")
	assert.Equal(t, `1 - slo:period_burn_rate:ratio{sloth_id="llmslo-engine_queue", sloth_service="llmslo", sloth_slo="engine_queue"}`,
		meta["slo:period_error_budget_remaining:ratio"])

	page := rules["sloth-slo-alerts-llmslo-engine_queue LLMSLOErrorBudgetBurn page"]
	assert.Equal(t, map[string]string{"severity": "page", "sloth_severity": "page", "llm_slo_name": "engine_queue"}, page.Labels)
	assert.Contains(t, page.Expr, `max(slo:sli_error:ratio_rate5m{sloth_id="llmslo-engine_queue", sloth_service="llmslo", sloth_slo="engine_queue"} > (13.44 * 0.001)) without (sloth_window)`)
	assert.Contains(t, page.Expr, `ratio_rate6h{sloth_id="llmslo-engine_queue", sloth_service="llmslo", sloth_slo="engine_queue"} > (5.6 * 0.001))`)
	assert.NotContains(t, page.Expr, "increase", "no guard unless asked")
	assert.Contains(t, page.Annotations["description"], "99.9% objective over 4w")
	assert.Contains(t, page.Annotations["description"], "13.44 times the error budget over both 1h and 5m, or 5.6 times the error budget over both 6h and 30m")
	ticket := rules["sloth-slo-alerts-llmslo-engine_queue LLMSLOErrorBudgetBurn ticket"]
	assert.Contains(t, ticket.Expr, `ratio_rate3d{sloth_id="llmslo-engine_queue", sloth_service="llmslo", sloth_slo="engine_queue"} > (0.933333333333 * 0.001))`)
}

func TestOptions(t *testing.T) {
	slos := slosOf(t, twoProcessors...)
	f, err := Prometheus(slos, Options{Service: "chat", MinRequests: 20, WindowDivisor: 60, Matchers: []string{`env="prod"`}})
	require.NoError(t, err)
	rules := rulesOf(t, f)
	sli := rules["sloth-slo-sli-recordings-chat-interactive slo:sli_error:ratio_rate1h "]
	assert.Contains(t, sli.Expr, `llm_slo_requests_total{llm_slo_name="interactive",env="prod"}[1m]`, "1h / 60, names unchanged")
	assert.Equal(t, "1h", sli.Labels["sloth_window"])
	assert.Contains(t, rules["sloth-slo-sli-recordings-chat-interactive slo:sli_error:ratio_rate30d "].Expr, "[12h]")
	page := rules["sloth-slo-alerts-chat-interactive LLMSLOErrorBudgetBurn page"]
	assert.Contains(t, page.Expr, "and on()\n    sum(increase(llm_slo_requests_total{llm_slo_name=\"interactive\",env=\"prod\"}[5s])) >= 20\n")
	assert.Contains(t, page.Expr, "[30s])) >= 20\n")
	assert.Contains(t, page.Annotations["description"], "fewer than 20 requests")
	assert.NotContains(t, rules["sloth-slo-alerts-chat-interactive LLMSLOErrorBudgetBurn ticket"].Expr, "increase", "tickets are not guarded")

	for _, o := range []Options{{MinRequests: -1}, {WindowDivisor: -2}, {WindowDivisor: 7}, {WindowDivisor: 1000}} {
		_, err := Prometheus(slos, o)
		assert.Error(t, err, "%+v", o)
	}
}

func TestFormats(t *testing.T) {
	slos := slosOf(t, twoProcessors...)
	for _, format := range []string{"prometheus", "sloth", "pyrra", "openslo"} {
		var b bytes.Buffer
		require.NoError(t, Write(&b, format, "config.yaml", slos, Options{}), format)
		assert.True(t, strings.HasPrefix(b.String(), "# Generated by llmslo from config.yaml."), format)
		dec := yaml.NewDecoder(&b)
		docs := 0
		for {
			var doc map[string]any
			if dec.Decode(&doc) != nil {
				break
			}
			docs++
		}
		assert.Equal(t, map[string]int{"prometheus": 1, "sloth": 2, "pyrra": 2, "openslo": 3}[format], docs, format)
	}
	assert.ErrorContains(t, Write(&bytes.Buffer{}, "nope", "x", slos, Options{}), "allowed values are prometheus, sloth, pyrra, openslo")

	sloth := Sloth(slos, Options{})
	require.Len(t, sloth, 2)
	assert.Equal(t, 28*promtime.Day, sloth[0].Period)
	s := sloth[1].Spec.SLOs[0]
	assert.Equal(t, `sum(rate(llm_slo_requests_total{llm_slo_name="interactive"}[{{.window}}])) - sum(rate(llm_slo_requests_met_total{llm_slo_name="interactive"}[{{.window}}]))`, s.SLI.Events.ErrorQuery)
	assert.Equal(t, "page", s.Alerting.PageAlert.Labels["severity"])

	ps, err := Pyrra(slos, Options{})
	require.NoError(t, err)
	p := ps[1]
	assert.Equal(t, "llmslo-engine-queue", p.Metadata.Name)
	assert.Equal(t, "99.9", p.Spec.Target)
	assert.Equal(t, "4w", p.Spec.Window)
	assert.Equal(t, `llm_slo_requests_met_total{llm_slo_name="engine_queue"}`, p.Spec.Indicator.Latency.Success.Metric)
	o := OpenSLOs(slos, Options{})[1]
	assert.Equal(t, "SLO", o.Kind)
	assert.Equal(t, []any{map[string]any{"duration": "30d", "isRolling": true}}, o.Spec["timeWindow"])
}

// TestExcludeUnknownFormats: an SLO with unknown_verdicts: exclude reads
// violated / (met + violated) in the Sloth spec and the OpenSLO ratio, its
// alert says so, and Pyrra, which cannot express it, is refused by name.
func TestExcludeUnknownFormats(t *testing.T) {
	slos := slosOf(t, llmSLO(slo.Definition{Name: "decidable", Objective: 99, Period: 30 * promtime.Day,
		Bounds: []slo.Bound{ms(slo.TTFT, 500)}, ExcludeUnknown: true}))
	s, o := &slos[0], Options{}
	assert.Equal(t, `sum(rate(llm_slo_requests_violated_total{llm_slo_name="decidable"}[5m]))`, s.ErrorQuery("5m", nil))
	assert.Equal(t, `sum(rate(llm_slo_requests_met_total{llm_slo_name="decidable"}[5m])) + sum(rate(llm_slo_requests_violated_total{llm_slo_name="decidable"}[5m]))`,
		s.TotalQuery("5m", nil))
	sloth := Sloth(slos, o)[0].Spec.SLOs[0]
	assert.Equal(t, s.ErrorQuery("{{.window}}", nil), sloth.SLI.Events.ErrorQuery)
	assert.Equal(t, s.TotalQuery("{{.window}}", nil), sloth.SLI.Events.TotalQuery)
	ratio := OpenSLOs(slos, o)[1].Spec["indicator"].(map[string]any)["spec"].(map[string]any)["ratioMetric"].(map[string]any)
	query := func(side string) any {
		return ratio[side].(map[string]any)["metricSource"].(map[string]any)["spec"].(map[string]any)["query"]
	}
	assert.Equal(t, `sum(llm_slo_requests_met_total{llm_slo_name="decidable"})`, query("good"))
	assert.Equal(t, `sum(llm_slo_requests_met_total{llm_slo_name="decidable"}) + sum(llm_slo_requests_violated_total{llm_slo_name="decidable"})`, query("total"))
	assert.Contains(t, alertingAnnotations(s, Windows[0], "")["description"], "the error ratio (violated / (met + violated): unknown verdicts excluded, over the decidable requests)")
	assert.Contains(t, o.unknownAlert(s).Annotations["description"], "so they are left out of the SLI (unknown_verdicts: exclude)")
	_, err := Pyrra(slos, o)
	require.EqualError(t, err, "SLO decidable: unknown_verdicts: exclude cannot be written for Pyrra: its indicators take one total metric, "+
		"and the decidable requests are two (met + violated); use --format prometheus, sloth or openslo, or unknown_verdicts: bad")
	var b bytes.Buffer
	require.ErrorContains(t, Write(&b, "pyrra", "test", slos, o), "cannot be written for Pyrra")
}
