// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package dashboard

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmslo/llmslo/internal/promtime"
	"github.com/llmslo/llmslo/tools/internal/slorules"
)

// Exprs lists the PromQL of every panel target of the dashboard JSON.
func exprs(t *testing.T, raw []byte) (titles, out []string) {
	var d struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	require.NoError(t, json.Unmarshal(raw, &d))
	for _, p := range d.Panels {
		titles = append(titles, p.Title)
		for _, x := range p.Targets {
			out = append(out, x.Expr)
		}
	}
	return titles, out
}

func TestBuild(t *testing.T) {
	// The SLOs of config/collector.yaml (the llmslo command's tests build
	// its dashboard from the file).
	slos := []slorules.SLO{
		{Name: "interactive", Processor: "llm_slo", Objective: 99, Period: 30 * promtime.Day, LayerLabel: "llm_layer"},
		{Name: "engine_queue", Processor: "llm_slo", Objective: 99.5, Period: 28 * promtime.Day, LayerLabel: "llm_layer", Layer: "server"},
	}
	d, err := Build(slos, Options{Rules: slorules.Options{Matchers: []string{`env="prod"`}}})
	require.NoError(t, err)
	raw, err := json.Marshal(d)
	require.NoError(t, err)

	var vars struct {
		Templating struct{ List []map[string]any }
	}
	require.NoError(t, json.Unmarshal(raw, &vars))
	var names []string
	for _, v := range vars.Templating.List {
		names = append(names, v["name"].(string))
	}
	assert.Equal(t, []string{"datasource", "slo", "model", "layer"}, names)
	assert.Equal(t, "interactive,engine_queue", vars.Templating.List[1]["query"])
	assert.Equal(t, "label_values(llm_slo_requests_total, gen_ai_request_model)", vars.Templating.List[2]["query"])

	titles, all := exprs(t, raw)
	assert.Equal(t, []string{"Objectives", "Goodput against the objective", "Error budget remaining", "Burn rate",
		"Goodput by model and layer", "Violations by constraint", "Why interactive misses", "Why engine_queue misses", "Decidable requests", "Weighted share", "Good requests per second", "Token goodput",
		"Latency by model and layer (native histograms)", "TTFT P50 / P90 / P99", "TPOT P50 / P90 / P99",
		"ITL (every gap) P50 / P90 / P99", "E2E P50 / P90 / P99"}, titles)
	require.Len(t, all, 2+1+2+1+1+2+1+1+1+1+4*3)
	assert.Equal(t, `1 - slo:sli_error:ratio_rate5m{sloth_service="llmslo", sloth_slo=~"$slo"}`, all[0])
	assert.Equal(t, `slo:period_error_budget_remaining:ratio{sloth_service="llmslo", sloth_slo=~"$slo"}`, all[2])
	assert.Equal(t, `sum by (llm_slo_name, llm_slo_constraint) (rate(llm_slo_violations_total{llm_slo_name=~"$slo", gen_ai_request_model=~"$model", llm_layer=~"$layer", env="prod"}[$__rate_interval]))`, all[6])
	// Why each SLO misses: its violations with a cause, by constraint and
	// cause, narrowed to the SLO (and hidden when $slo leaves it out).
	for i, name := range []string{"interactive", "engine_queue"} {
		assert.Equal(t, `sum by (llm_slo_constraint, llm_slo_cause) (rate(llm_slo_violations_total{llm_slo_name=~"$slo", llm_slo_name="`+name+
			`", llm_slo_cause!="", gen_ai_request_model=~"$model", llm_layer=~"$layer", env="prod"}[$__rate_interval]))`, all[7+i])
	}
	assert.Equal(t, "1 - sum by (llm_slo_name) (rate(llm_slo_requests_unknown_total{llm_slo_name=~\"$slo\", gen_ai_request_model=~\"$model\", llm_layer=~\"$layer\", env=\"prod\"}[$__rate_interval]))\n/\n"+
		"sum by (llm_slo_name) (rate(llm_slo_requests_total{llm_slo_name=~\"$slo\", gen_ai_request_model=~\"$model\", llm_layer=~\"$layer\", env=\"prod\"}[$__rate_interval]))", all[9])
	// The weighted share: requests counted from sampled spans / requests.
	assert.Equal(t, "sum by (llm_slo_name) (rate(llm_slo_requests_weighted_total{llm_slo_name=~\"$slo\", gen_ai_request_model=~\"$model\", llm_layer=~\"$layer\", env=\"prod\"}[$__rate_interval]))\n/\n"+
		"sum by (llm_slo_name) (rate(llm_slo_requests_total{llm_slo_name=~\"$slo\", gen_ai_request_model=~\"$model\", llm_layer=~\"$layer\", env=\"prod\"}[$__rate_interval]))", all[10])
	assert.Equal(t, `histogram_quantile(0.99, sum by (gen_ai_request_model, llm_layer) (rate({__name__=~"gen_ai_server_time_to_first_token_seconds|gen_ai_client_operation_time_to_first_chunk_seconds", gen_ai_request_model=~"$model", llm_layer=~"$layer", env="prod"}[$__rate_interval])))`, all[15])
	for _, e := range all {
		assert.Equal(t, strings.Count(e, "("), strings.Count(e, ")"), e)
	}
	_, err = Build(nil, Options{})
	assert.Error(t, err)
}

// TestBuildUnknownVerdicts: with one SLO counting unknown verdicts as bad
// and one excluding them, the ratios the dashboard computes are written
// once per policy, each narrowed to its SLOs, the excluding one over met +
// violated, and the legends and descriptions name the denominator.
func TestBuildUnknownVerdicts(t *testing.T) {
	slos := []slorules.SLO{{Name: "interactive", LayerLabel: "llm_layer"}, {Name: "batch", LayerLabel: "llm_layer", ExcludeUnknown: true}}
	d, err := Build(slos, Options{})
	require.NoError(t, err)
	raw, err := json.Marshal(d)
	require.NoError(t, err)
	var panels struct {
		Panels []struct {
			Title, Description string
			Targets            []struct{ Expr, LegendFormat string }
		}
	}
	require.NoError(t, json.Unmarshal(raw, &panels))
	byTitle := map[string]int{}
	for i, p := range panels.Panels {
		byTitle[p.Title] = i
	}
	goodput := panels.Panels[byTitle["Goodput against the objective"]]
	require.Len(t, goodput.Targets, 3)
	assert.Equal(t, `1 - slo:sli_error:ratio_rate5m{sloth_service="llmslo", sloth_slo=~"$slo", sloth_slo=~"interactive"}`, goodput.Targets[0].Expr)
	assert.Equal(t, "{{sloth_slo}} goodput (5m)", goodput.Targets[0].LegendFormat)
	assert.Equal(t, `1 - slo:sli_error:ratio_rate5m{sloth_service="llmslo", sloth_slo=~"$slo", sloth_slo=~"batch"}`, goodput.Targets[1].Expr)
	assert.Equal(t, "{{sloth_slo}} goodput of decidable requests (5m)", goodput.Targets[1].LegendFormat)
	assert.Contains(t, goodput.Description, "Denominator: every selected request, unknown verdicts counting as not met, for interactive; "+
		"the decidable requests, met + violated, for batch (unknown_verdicts: exclude).")

	byModel := panels.Panels[byTitle["Goodput by model and layer"]]
	require.Len(t, byModel.Targets, 2)
	sel := func(metric, slo string) string {
		return `sum by (llm_slo_name, gen_ai_request_model, llm_layer) (rate(` + metric + `{llm_slo_name=~"$slo", llm_slo_name=~"` + slo +
			`", gen_ai_request_model=~"$model", llm_layer=~"$layer"}[$__rate_interval]))`
	}
	assert.Equal(t, sel("llm_slo_requests_met_total", "interactive")+"\n/\n"+sel("llm_slo_requests_total", "interactive"), byModel.Targets[0].Expr)
	assert.Equal(t, sel("llm_slo_requests_met_total", "batch")+"\n/\n("+sel("llm_slo_requests_met_total", "batch")+" + "+sel("llm_slo_requests_violated_total", "batch")+")",
		byModel.Targets[1].Expr)
	assert.Equal(t, "{{llm_slo_name}} {{gen_ai_request_model}} {{llm_layer}} of decidable requests", byModel.Targets[1].LegendFormat)

	// One policy only: nothing is narrowed.
	d, err = Build(slos[1:], Options{})
	require.NoError(t, err)
	raw, err = json.Marshal(d)
	require.NoError(t, err)
	_, all := exprs(t, raw)
	assert.Equal(t, `1 - slo:sli_error:ratio_rate5m{sloth_service="llmslo", sloth_slo=~"$slo"}`, all[0])
}

// TestBuildCausePanels: "Why <SLO> misses" stands beside "Violations by
// constraint", stacked, one series per constraint and cause, legend
// "<constraint>:<cause>" as the processor writes llm.slo.<name>.causes.
func TestBuildCausePanels(t *testing.T) {
	slos := []slorules.SLO{{Name: "interactive", LayerLabel: "llm_layer"}}
	d, err := Build(slos, Options{})
	require.NoError(t, err)
	raw, err := json.Marshal(d)
	require.NoError(t, err)
	var panels struct {
		Panels []struct {
			Title       string
			Description string
			GridPos     struct{ X, Y, W int }
			FieldConfig struct {
				Defaults struct {
					Custom struct {
						Stacking    struct{ Mode string }
						FillOpacity float64
					}
				}
			}
			Targets []struct{ Expr, LegendFormat string }
		}
	}
	require.NoError(t, json.Unmarshal(raw, &panels))
	var violations, why int
	for i, p := range panels.Panels {
		switch p.Title {
		case "Violations by constraint":
			violations = i
		case "Why interactive misses":
			why = i
		}
	}
	require.Equal(t, violations+1, why, "beside Violations by constraint")
	p := panels.Panels[why]
	assert.Equal(t, panels.Panels[violations].GridPos.Y, p.GridPos.Y, "on the same row")
	assert.Equal(t, "normal", p.FieldConfig.Defaults.Custom.Stacking.Mode)
	require.Len(t, p.Targets, 1)
	assert.Equal(t, `sum by (llm_slo_constraint, llm_slo_cause) (rate(llm_slo_violations_total{llm_slo_name=~"$slo", llm_slo_name="interactive", llm_slo_cause!="", gen_ai_request_model=~"$model", llm_layer=~"$layer"}[$__rate_interval]))`,
		p.Targets[0].Expr)
	assert.Equal(t, "{{llm_slo_constraint}}:{{llm_slo_cause}}", p.Targets[0].LegendFormat)
	assert.Contains(t, p.Description, "output_length")
}
