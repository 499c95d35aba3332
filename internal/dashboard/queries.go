// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package dashboard

import (
	"fmt"
	"strings"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"

	"github.com/llmslo/llmslo/internal/promname"
	"github.com/llmslo/llmslo/internal/slorules"
	"github.com/llmslo/llmslo/llmsloconnector"
)

// queries writes the dashboard's PromQL.
type queries struct {
	requests, model, layer string
	service                string
	extra                  []string
}

func newQueries(slos []slorules.SLO, o slorules.Options) *queries {
	service := o.Service
	if service == "" {
		service = "llmslo"
	}
	return &queries{requests: metricRequests, model: promname.Label(llmsloconnector.AttrRequestModel),
		layer: slos[0].LayerLabel, service: service, extra: o.Matchers}
}

// counters selects the connector's series of the chosen SLOs, models and
// layers.
func (q *queries) counters(metric string) string {
	m := append([]string{fmt.Sprintf(`%s=~"$%s"`, labelSLOName, varSLO), q.dims()}, q.extra...)
	return metric + "{" + strings.Join(m, ", ") + "}"
}

func (q *queries) dims() string {
	return fmt.Sprintf(`%s=~"$%s", %s=~"$%s"`, q.model, varModel, q.layer, varLayer)
}

// recorded selects a recording rule's series of the chosen SLOs.
func (q *queries) recorded(name string) string {
	return fmt.Sprintf(`%s{sloth_service=%q, sloth_slo=~"$%s"}`, name, q.service, varSLO)
}

func rate(sel string) string { return fmt.Sprintf("rate(%s[%s])", sel, rateInterval) }

func (q *queries) sloPanels() []cog.Builder[dashboard.Panel] {
	by := "sum by (" + labelSLOName + ") "
	byModel := fmt.Sprintf("sum by (%s, %s, %s) ", labelSLOName, q.model, q.layer)
	return []cog.Builder[dashboard.Panel]{
		series("Goodput against the objective", "Share of requests meeting every constraint of the SLO (5m, all models and layers: the SLI the alerts use) and the objective.", "percentunit",
			target("1 - "+q.recorded(slorules.SLIRecord(slorules.Windows[0].Quick.Short)), "{{sloth_slo}} goodput (5m)"),
			target(q.recorded(slorules.Records.Objective), "{{sloth_slo}} objective")),
		single("Error budget remaining", "Share of the period's error budget left (1 - period burn rate); below 0 the objective is missed.", "percentunit",
			target(q.recorded(slorules.Records.BudgetRemaining), "{{sloth_slo}}")),
		series("Burn rate", "Error ratio / error budget: 1 spends the budget exactly over the period; the page fires above 14.4 (1h and 5m) or 6 (6h and 30m) for a 30-day period.", "none",
			target(q.recorded(slorules.Records.CurrentBurnRate), "{{sloth_slo}} now (5m)"),
			target(q.recorded(slorules.Records.PeriodBurnRate), "{{sloth_slo}} over the period")),
		series("Goodput by model and layer", "Requests meeting the SLO / requests, per model and layer.", "percentunit",
			target(fmt.Sprintf("%s(%s)\n/\n%s(%s)", byModel, rate(q.counters(metricMet)), byModel, rate(q.counters(metricRequests))),
				"{{"+labelSLOName+"}} {{"+q.model+"}} {{"+q.layer+"}}")),
		series("Violations by constraint", "Requests per second failing each constraint (a request can fail several); error = failed requests, <constraint>:unknown = undecidable.", "reqps",
			target(fmt.Sprintf("sum by (%s, %s) (%s)", labelSLOName, labelConstraint, rate(q.counters(metricViolations))),
				"{{"+labelSLOName+"}} {{"+labelConstraint+"}}")),
		series("Good requests per second", "Requests meeting the SLO, per second.", "reqps",
			target(by+"("+rate(q.counters(metricMet))+")", "{{"+labelSLOName+"}}")),
		series("Token goodput", "Output tokens of the requests meeting the SLO, per second.", "none",
			target(by+"("+rate(q.counters(metricTokensMet))+")", "{{"+labelSLOName+"}} tokens/s")),
	}
}

// latencies are the dashboard's latency panels.
var latencies = []struct {
	title string
	l     llmsloconnector.Latency
}{
	{"TTFT", llmsloconnector.LatencyTTFT}, {"TPOT", llmsloconnector.LatencyTPOT},
	{"ITL (every gap)", llmsloconnector.LatencyITL}, {"E2E", llmsloconnector.LatencyE2E},
}

// histogram selects the latency's histogram at every layer: the layers'
// metric names differ (gen_ai.server.* and gen_ai.client.*), so the name is
// matched by regular expression.
func (q *queries) histogram(l llmsloconnector.Latency) string {
	var names []string
	for _, layer := range llmsloconnector.Layers {
		m, _ := llmsloconnector.LatencyHistogram(l, layer)
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
