// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package dashboard

import (
	"fmt"
	"strings"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"

	"github.com/llmslo/llmslo/internal/catalog"
	"github.com/llmslo/llmslo/tools/internal/promname"
	"github.com/llmslo/llmslo/tools/internal/slorules"
)

// queries writes the dashboard's PromQL.
type queries struct {
	requests, model, layer string
	service                string
	extra                  []string
	policies               []policy
	names                  []string // the SLOs, in configuration order
}

// policy is the SLOs of one unknown_verdicts policy. A ratio the dashboard
// computes from the counters divides by every selected request, or by the
// decidable ones (met + violated) for SLOs that exclude unknown verdicts,
// so such a target is written once per policy; narrow says its queries must
// name the policy's SLOs (both policies are in use).
type policy struct {
	exclude bool
	names   []string
	narrow  bool
}

func newQueries(slos []slorules.SLO, o slorules.Options) *queries {
	service := o.Service
	if service == "" {
		service = "llmslo"
	}
	return &queries{requests: promname.SLORequests, model: promname.Label(catalog.AttrRequestModel),
		layer: slos[0].LayerLabel, service: service, extra: o.Matchers, policies: policiesOf(slos), names: sloNames(slos)}
}

// policiesOf groups the SLOs by policy, unknown-as-bad first.
func policiesOf(slos []slorules.SLO) []policy {
	var bad, exclude policy
	exclude.exclude = true
	for _, s := range slos {
		if s.ExcludeUnknown {
			exclude.names = append(exclude.names, s.Name)
		} else {
			bad.names = append(bad.names, s.Name)
		}
	}
	var out []policy
	for _, p := range []policy{bad, exclude} {
		if len(p.names) > 0 {
			out = append(out, p)
		}
	}
	for i := range out {
		out[i].narrow = len(out) > 1
	}
	return out
}

// match narrows a selector to the policy's SLOs by label.
func (p policy) match(label string) []string {
	if !p.narrow {
		return nil
	}
	return []string{fmt.Sprintf("%s=~%q", label, strings.Join(p.names, "|"))}
}

// legend names what the policy's ratios divide by.
func (p policy) legend(what string) string {
	if p.exclude {
		return what + " of decidable requests"
	}
	return what
}

// counters selects the connector's series of the chosen SLOs, models and
// layers, narrowed by the matchers more.
func (q *queries) counters(metric string, more ...string) string {
	m := append([]string{fmt.Sprintf(`%s=~"$%s"`, promname.LabelSLOName, varSLO)}, more...)
	m = append(append(m, q.dims()), q.extra...)
	return metric + "{" + strings.Join(m, ", ") + "}"
}

func (q *queries) dims() string {
	return fmt.Sprintf(`%s=~"$%s", %s=~"$%s"`, q.model, varModel, q.layer, varLayer)
}

// recorded selects a recording rule's series of the chosen SLOs.
func (q *queries) recorded(name string, more ...string) string {
	m := append([]string{fmt.Sprintf("sloth_service=%q", q.service), fmt.Sprintf(`sloth_slo=~"$%s"`, varSLO)}, more...)
	return name + "{" + strings.Join(m, ", ") + "}"
}

func rate(sel string) string { return fmt.Sprintf("rate(%s[%s])", sel, rateInterval) }

// denominators says what the SLOs' ratios divide by, for the descriptions.
func (q *queries) denominators() string {
	var parts []string
	for _, p := range q.policies {
		if p.exclude {
			parts = append(parts, "the decidable requests, met + violated, for "+strings.Join(p.names, ", ")+" (unknown_verdicts: exclude)")
		} else {
			parts = append(parts, "every selected request, unknown verdicts counting as not met, for "+strings.Join(p.names, ", "))
		}
	}
	return "Denominator: " + strings.Join(parts, "; ") + "."
}

func (q *queries) sloPanels() []cog.Builder[dashboard.Panel] {
	goodput := series("Goodput against the objective", "Share of requests meeting every constraint of the SLO (5m, all models and layers: the SLI the alerts use) and the objective. "+q.denominators(), "percentunit")
	for _, p := range q.policies {
		goodput.WithTarget(target("1 - "+q.recorded(slorules.SLIRecord(slorules.Windows[0].Quick.Short), p.match("sloth_slo")...), "{{sloth_slo}} "+p.legend("goodput")+" (5m)"))
	}
	goodput.WithTarget(target(q.recorded(slorules.Records.Objective), "{{sloth_slo}} objective"))
	return append([]cog.Builder[dashboard.Panel]{
		goodput,
		single("Error budget remaining", "Share of the period's error budget left (1 - period burn rate); below 0 the objective is missed.", "percentunit",
			target(q.recorded(slorules.Records.BudgetRemaining), "{{sloth_slo}}")),
		series("Burn rate", "Error ratio / error budget: 1 spends the budget exactly over the period; the page fires above 14.4 (1h and 5m) or 6 (6h and 30m) for a 30-day period.", "none",
			target(q.recorded(slorules.Records.CurrentBurnRate), "{{sloth_slo}} now (5m)"),
			target(q.recorded(slorules.Records.PeriodBurnRate), "{{sloth_slo}} over the period")),
		q.goodputByModel(),
	}, q.trafficPanels()...)
}

// goodputByModel is met / requests per model and layer, or met / (met +
// violated) for the SLOs that exclude unknown verdicts.
func (q *queries) goodputByModel() cog.Builder[dashboard.Panel] {
	byModel := fmt.Sprintf("sum by (%s, %s, %s) ", promname.LabelSLOName, q.model, q.layer)
	p := series("Goodput by model and layer", "Requests meeting the SLO / requests, per model and layer. "+q.denominators(), "percentunit")
	for _, pol := range q.policies {
		m := pol.match(promname.LabelSLOName)
		met := byModel + "(" + rate(q.counters(promname.SLOMet, m...)) + ")"
		total := byModel + "(" + rate(q.counters(promname.SLORequests, m...)) + ")"
		if pol.exclude {
			total = "(" + met + " + " + byModel + "(" + rate(q.counters(promname.SLOViolated, m...)) + "))"
		}
		p.WithTarget(target(met+"\n/\n"+total, "{{"+promname.LabelSLOName+"}} {{"+q.model+"}} {{"+q.layer+"}}"+pol.legend("")))
	}
	return p
}

// trafficPanels count requests: violations, and beside them why each SLO
// misses, decidable share, weighted (sampled) share, good requests and
// tokens.
func (q *queries) trafficPanels() []cog.Builder[dashboard.Panel] {
	by := "sum by (" + promname.LabelSLOName + ") "
	violations := series("Violations by constraint", "Requests per second failing each constraint (a request can fail several); error = failed requests, <constraint>:unknown = undecidable.", "reqps",
		target(fmt.Sprintf("sum by (%s, %s) (%s)", promname.LabelSLOName, promname.LabelSLOConstraint, rate(q.counters(promname.SLOViolations))),
			"{{"+promname.LabelSLOName+"}} {{"+promname.LabelSLOConstraint+"}}"))
	return append(append([]cog.Builder[dashboard.Panel]{violations}, q.causePanels()...),
		series("Decidable requests", "Share of each SLO's requests whose verdict was decided (met or violated); the others are unknown: a value the SLO reads is missing from their spans "+
			"(Violations by constraint names it, <constraint>:unknown). Unknown verdicts count as not met, or are left out of the SLI under unknown_verdicts: exclude. "+q.denominators(), "percentunit",
			target(fmt.Sprintf("1 - %s(%s)\n/\n%s(%s)", by, rate(q.counters(promname.SLOUnknown)), by, rate(q.counters(promname.SLORequests))), "{{"+promname.LabelSLOName+"}} decidable")),
		series("Weighted share", "Share of each SLO's requests counted from spans that stand for more than one request (a sampler's adjusted count above 1, "+
			"read from the sender's tracestate and bounded by the connector's max_adjusted_count). A share that jumps without a sampling change means some sender claims "+
			"to be sampled: its spans weigh up to max_adjusted_count requests each.", "percentunit",
			target(fmt.Sprintf("%s(%s)\n/\n%s(%s)", by, rate(q.counters(promname.SLOWeighted)), by, rate(q.counters(promname.SLORequests))), "{{"+promname.LabelSLOName+"}} weighted")),
		series("Good requests per second", "Requests meeting the SLO, per second.", "reqps",
			target(by+"("+rate(q.counters(promname.SLOMet))+")", "{{"+promname.LabelSLOName+"}}")),
		series("Token goodput", "Output tokens of the requests meeting the SLO, per second.", "none",
			target(by+"("+rate(q.counters(promname.SLOTokensMet))+")", "{{"+promname.LabelSLOName+"}} tokens/s")))
}

// causePanels are one panel per SLO, "Why <name> misses": its violations
// of latency constraints by constraint and cause (the processor's
// llm.slo.<name>.causes), stacked. Violations without a cause (error,
// <constraint>:unknown, spans of a processor that wrote no causes) are in
// Violations by constraint.
func (q *queries) causePanels() []cog.Builder[dashboard.Panel] {
	var out []cog.Builder[dashboard.Panel]
	for _, name := range q.names {
		sel := q.counters(promname.SLOViolations, fmt.Sprintf("%s=%q", promname.LabelSLOName, name), promname.LabelSLOCause+`!=""`)
		p := series("Why "+name+" misses", "Violations per second of each latency constraint of SLO "+name+", by cause: "+
			"queue (capacity), prefill (long prompts, no prefix cache), kv_transfer (prefill/decode split), network (client TTFT above the engine's), "+
			"decode (time per token), output_length (answers too long for the budget at a healthy pace), unattributed (the known parts explain less than half). "+
			"A request that fails several constraints counts once in each; one seen by a client and an engine span counts at each layer (choose a layer for shares). "+
			"Failed requests and undecidable verdicts are in Violations by constraint.", "reqps",
			target(fmt.Sprintf("sum by (%s, %s) (%s)", promname.LabelSLOConstraint, promname.LabelSLOCause, rate(sel)), "{{"+promname.LabelSLOConstraint+"}}:{{"+promname.LabelSLOCause+"}}"))
		out = append(out, p.Stacking(common.NewStackingConfigBuilder().Mode(common.StackingModeNormal)).FillOpacity(40))
	}
	return out
}

// latencies are the dashboard's latency panels.
var latencies = []struct {
	title string
	l     catalog.Latency
}{
	{"TTFT", catalog.LatencyTTFT}, {"TPOT", catalog.LatencyTPOT},
	{"ITL (every gap)", catalog.LatencyITL}, {"E2E", catalog.LatencyE2E},
}

// histogram selects the latency's histogram at every layer: the layers'
// metric names differ (gen_ai.server.* and gen_ai.client.*), so the name is
// matched by regular expression.
func (q *queries) histogram(l catalog.Latency) string {
	var names []string
	for _, layer := range catalog.Layers {
		m, _ := catalog.LatencyHistogram(l, layer)
		n := promname.Metric(m)
		if !containsString(names, n) {
			names = append(names, n)
		}
	}
	m := append([]string{fmt.Sprintf(`__name__=~%q`, strings.Join(names, "|")), q.dims()}, q.extra...)
	return "{" + strings.Join(m, ", ") + "}"
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// percentiles of the latency panels.
var percentiles = []struct{ q, name string }{{"0.5", "P50"}, {"0.9", "P90"}, {"0.99", "P99"}}

func (q *queries) latencyPanels() []cog.Builder[dashboard.Panel] {
	var out []cog.Builder[dashboard.Panel]
	for _, x := range latencies {
		p := series(x.title+" P50 / P90 / P99", x.title+" percentiles per model and layer, from the connector's exponential histograms (Prometheus native histograms).", "s")
		for _, pc := range percentiles {
			p.WithTarget(target(fmt.Sprintf("histogram_quantile(%s, sum by (%s, %s) (%s))", pc.q, q.model, q.layer, rate(q.histogram(x.l))),
				fmt.Sprintf("%s {{%s}} {{%s}}", pc.name, q.model, q.layer)))
		}
		out = append(out, p)
	}
	return out
}
