// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

// Package dashboard builds the Grafana dashboard of a configuration's SLOs
// and latencies with the Grafana Foundation SDK: per SLO the goodput
// against the objective, the error budget left and the burn rates (from
// the recording rules of `llmslo rules`), violations by constraint and,
// per SLO, by constraint and cause, the share of decidable verdicts, good requests/s and token goodput; per model and layer P50/P90/P99 of TTFT,
// TPOT, ITL and E2E from the connector's native histograms.
package dashboard

import (
	"fmt"
	"strings"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"

	"github.com/llmslo/llmslo/internal/catalog"
	"github.com/llmslo/llmslo/tools/internal/slorules"
)

// Options shape the dashboard.
type Options struct {
	// Title of the dashboard; default "LLM SLOs".
	Title string
	// UID of the dashboard; default "llmslo".
	UID string
	// Rules are the options the rules were generated with (the service in
	// sloth_service, the extra matchers).
	Rules slorules.Options
}

// Variables the queries use.
const (
	varDatasource = "datasource"
	varSLO        = "slo"
	varModel      = "model"
	varLayer      = "layer"
	// rateInterval is Grafana's range for rate(): at least four scrapes.
	rateInterval = "$__rate_interval"
)

var ds = common.DataSourceRef{Type: cog.ToPtr("prometheus"), Uid: cog.ToPtr("${" + varDatasource + "}")}

// Build returns the dashboard of slos. The layer label is the first SLO's
// (one configuration has one attribute_prefix in practice).
//
// It is the classic dashboard JSON model (schemaVersion 42), which every
// Grafana imports; the SDK marks it deprecated in favor of the v2 schema,
// which only Grafana 12 with its dynamic-dashboards feature reads.
func Build(slos []slorules.SLO, o Options) (dashboard.Dashboard, error) { //nolint:staticcheck // classic JSON model on purpose, see above
	if len(slos) == 0 {
		return dashboard.Dashboard{}, fmt.Errorf("no SLO with an objective") //nolint:staticcheck // see Build
	}
	title, uid := o.Title, o.UID
	if title == "" {
		title = "LLM SLOs"
	}
	if uid == "" {
		uid = "llmslo"
	}
	q := newQueries(slos, o.Rules)
	b := dashboard.NewDashboardBuilder(title). //nolint:staticcheck // see Build
							Uid(uid).
							Tags([]string{"llmslo", "slo", "llm"}).
							Refresh("30s").
							Time("now-6h", "now").
							Timezone(common.TimeZoneBrowser).
							Tooltip(dashboard.DashboardCursorSyncCrosshair).
							WithVariable(dashboard.NewDatasourceVariableBuilder(varDatasource).Label("Prometheus").Type("prometheus")).
							WithVariable(custom(varSLO, "SLO", sloNames(slos))).
							WithVariable(queryVar(varModel, "Model", fmt.Sprintf("label_values(%s, %s)", q.requests, q.model))).
							WithVariable(custom(varLayer, "Layer", catalog.Layers))
	b.WithRow(dashboard.NewRowBuilder("Objectives"))
	for _, p := range q.sloPanels() {
		b.WithPanel(p)
	}
	b.WithRow(dashboard.NewRowBuilder("Latency by model and layer (native histograms)"))
	for _, p := range q.latencyPanels() {
		b.WithPanel(p)
	}
	return b.Build()
}

func sloNames(slos []slorules.SLO) []string {
	var out []string
	for _, s := range slos {
		out = append(out, s.Name)
	}
	return out
}

// custom is a multi-value variable over fixed values, All by default.
func custom(name, label string, values []string) *dashboard.CustomVariableBuilder {
	v := strings.Join(values, ",")
	return dashboard.NewCustomVariableBuilder(name).Label(label).Values(dashboard.StringOrMap{String: &v}).
		Multi(true).IncludeAll(true).AllValue(".*").
		Current(dashboard.VariableOption{Text: dashboard.StringOrArrayOfString{String: cog.ToPtr("All")},
			Value: dashboard.StringOrArrayOfString{String: cog.ToPtr("$__all")}})
}

// queryVar is a multi-value variable over a label's values, All by default.
func queryVar(name, label, query string) *dashboard.QueryVariableBuilder {
	return dashboard.NewQueryVariableBuilder(name).Label(label).Datasource(ds).
		Query(dashboard.StringOrMap{String: &query}).Definition(query).
		Refresh(dashboard.VariableRefreshOnTimeRangeChanged).Sort(dashboard.VariableSortAlphabeticalAsc).
		Multi(true).IncludeAll(true).AllValue(".*").
		Current(dashboard.VariableOption{Text: dashboard.StringOrArrayOfString{String: cog.ToPtr("All")},
			Value: dashboard.StringOrArrayOfString{String: cog.ToPtr("$__all")}})
}

func target(expr, legend string) *prometheus.DataqueryBuilder {
	return prometheus.NewDataqueryBuilder().Expr(expr).LegendFormat(legend).Datasource(ds)
}

func series(title, desc, unit string, targets ...*prometheus.DataqueryBuilder) *timeseries.PanelBuilder {
	p := timeseries.NewPanelBuilder().Title(title).Description(desc).Unit(unit).Datasource(ds).Height(8).Span(12)
	for _, t := range targets {
		p.WithTarget(t)
	}
	return p
}

func single(title, desc, unit string, t *prometheus.DataqueryBuilder) *stat.PanelBuilder {
	return stat.NewPanelBuilder().Title(title).Description(desc).Unit(unit).Datasource(ds).Height(8).Span(12).WithTarget(t)
}
