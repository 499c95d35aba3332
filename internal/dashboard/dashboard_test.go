// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package dashboard

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmslo/llmslo/internal/collectorconfig"
	"github.com/llmslo/llmslo/internal/slorules"
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
	procs, err := collectorconfig.Load(context.Background(), "../../config/collector.yaml")
	require.NoError(t, err)
	slos, err := slorules.FromProcessors(procs)
	require.NoError(t, err)
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
		"Goodput by model and layer", "Violations by constraint", "Good requests per second", "Token goodput",
		"Latency by model and layer (native histograms)", "TTFT P50 / P90 / P99", "TPOT P50 / P90 / P99",
		"ITL (every gap) P50 / P90 / P99", "E2E P50 / P90 / P99"}, titles)
	require.Len(t, all, 2+1+2+1+1+1+1+4*3)
	assert.Equal(t, `1 - slo:sli_error:ratio_rate5m{sloth_service="llmslo", sloth_slo=~"$slo"}`, all[0])
	assert.Equal(t, `slo:period_error_budget_remaining:ratio{sloth_service="llmslo", sloth_slo=~"$slo"}`, all[2])
	assert.Equal(t, `sum by (llm_slo_name, llm_slo_constraint) (rate(llm_slo_violations_total{llm_slo_name=~"$slo", gen_ai_request_model=~"$model", llm_layer=~"$layer", env="prod"}[$__rate_interval]))`, all[6])
	assert.Equal(t, `histogram_quantile(0.99, sum by (gen_ai_request_model, llm_layer) (rate({__name__=~"gen_ai_server_time_to_first_token_seconds|gen_ai_client_operation_time_to_first_chunk_seconds", gen_ai_request_model=~"$model", llm_layer=~"$layer", env="prod"}[$__rate_interval])))`, all[11])
	for _, e := range all {
		assert.Equal(t, strings.Count(e, "("), strings.Count(e, ")"), e)
	}
	_, err = Build(nil, Options{})
	assert.Error(t, err)
}
