// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package slothcompat

import (
	"bytes"
	"context"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql/parser"
	"github.com/slok/sloth/pkg/lib"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	llmsloprocessor "github.com/llmslo/llmslo"
	"github.com/llmslo/llmslo/internal/promtime"
	"github.com/llmslo/llmslo/tools/internal/collectorconfig"
	"github.com/llmslo/llmslo/tools/internal/slorules"
)

// Labels Sloth sets on sloth_slo_info about itself, which llmslo sets
// about itself.
var selfDescribing = []string{"sloth_mode", "sloth_spec", "sloth_version"}

// TestSlothEquivalence runs Sloth's generator on `llmslo rules --format
// sloth` for the SLOs of config/collector.yaml (a 30-day and a 28-day
// period, Sloth's two built-in window sets) and checks that the rule file
// of `llmslo rules` has the same groups, rule names, labels and
// annotations, and expressions that parse to the same PromQL up to float
// noise (Sloth writes 1-0.999 as 0.0009999999999999432, llmslo as 0.001).
func TestSlothEquivalence(t *testing.T) {
	procs, err := collectorconfig.Load[*llmsloprocessor.Config](context.Background(), "../../config/collector.yaml", llmsloprocessor.NewFactory())
	require.NoError(t, err)
	var in []slorules.Processor
	for _, p := range procs {
		in = append(in, slorules.NewProcessor(p.ID.String(), p.Config))
	}
	slos, err := slorules.FromProcessors(in)
	require.NoError(t, err)
	periods := slorules.Sloth(slos, slorules.Options{})
	require.Len(t, periods, 2, "config/collector.yaml has a 28d and a 30d SLO")
	for _, p := range periods {
		t.Run(promtime.Format(p.Period), func(t *testing.T) {
			spec, err := yaml.Marshal(p.Spec)
			require.NoError(t, err)
			gen, err := lib.NewPrometheusSLOGenerator(lib.PrometheusSLOGeneratorConfig{DefaultSLOPeriod: p.Period})
			require.NoError(t, err)
			res, err := gen.GenerateFromRaw(context.Background(), spec)
			require.NoError(t, err)
			var out bytes.Buffer
			require.NoError(t, gen.WriteResultAsPrometheusStd(context.Background(), *res, &out))
			if os.Getenv("SLOTH_DUMP") != "" {
				t.Logf("Sloth:\n%s", out.String())
			}
			var theirs slorules.RuleFile
			require.NoError(t, yaml.Unmarshal(out.Bytes(), &theirs))

			var mine []slorules.SLO
			for _, s := range slos {
				if s.Period == p.Period {
					mine = append(mine, s)
				}
			}
			ours, err := slorules.Prometheus(mine, slorules.Options{})
			require.NoError(t, err)
			compare(t, ours, &theirs)
		})
	}
}

// slothDifference drops what llmslo adds to Sloth's rules (the
// LLMSLOVerdictsUnknown ticket) and the one deliberate difference: llmslo
// records the 5m rates of bad and of all requests and divides their sums
// over the period (a traffic-weighted ratio that a window without traffic
// cannot turn NaN), where Sloth averages the 5m ratios. The period rule
// keeps Sloth's name and labels; only its expression differs, and that
// expression is checked against the documented form.
func slothDifference(t *testing.T, rules []slorules.Rule) []slorules.Rule {
	var out []slorules.Rule
	for _, r := range rules {
		switch {
		case r.Record == slorules.ErrorEventsRecord(5*time.Minute) || r.Record == slorules.TotalEventsRecord(5*time.Minute):
			continue
		case r.Alert == slorules.UnknownAlertName: // an addition Sloth has not
			continue
		case strings.HasPrefix(r.Expr, "sum_over_time("+slorules.ErrorEventsRecord(5*time.Minute)):
			assert.Contains(t, r.Expr, "\n/\nsum_over_time("+slorules.TotalEventsRecord(5*time.Minute), r.Record)
			r.Expr = ""
		}
		out = append(out, r)
	}
	return out
}

func compare(t *testing.T, ours, theirs *slorules.RuleFile) {
	require.Equal(t, len(theirs.Groups), len(ours.Groups))
	rules, alerts := 0, 0
	for i, g := range theirs.Groups {
		o := ours.Groups[i]
		require.Equal(t, g.Name, o.Name)
		mine := slothDifference(t, o.Rules)
		require.Equal(t, len(g.Rules), len(mine), g.Name)
		for j, r := range g.Rules {
			m := mine[j]
			name := g.Name + " " + r.Record + r.Alert
			if m.Expr == "" { // the period's ratio: see slothDifference
				r.Expr = ""
				assert.Equal(t, r.Record, m.Record, name)
				assert.Equal(t, r.Labels, m.Labels, name)
				rules++
				continue
			}
			assert.Equal(t, r.Record, m.Record, name)
			assert.Equal(t, r.Alert, m.Alert, name)
			if r.Record == "sloth_slo_info" {
				for _, l := range selfDescribing {
					delete(r.Labels, l)
					delete(m.Labels, l)
				}
			}
			assert.Equal(t, r.Labels, m.Labels, name)
			assert.Equal(t, r.Annotations, m.Annotations, name)
			assert.Equal(t, normalize(t, r.Expr), normalize(t, m.Expr), name)
			if r.Alert != "" {
				alerts++
			} else {
				rules++
			}
		}
	}
	t.Logf("%d groups, %d recording rules and %d alerts: the same names, labels, annotations, windows, factors and expressions as Sloth's",
		len(theirs.Groups), rules, alerts)
}

// normalize parses a PromQL expression and prints it back with every
// number rounded to 12 significant digits: the same meaning prints the
// same.
func normalize(t *testing.T, expr string) string {
	e, err := parser.ParseExpr(expr)
	require.NoError(t, err, expr)
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		if nl, ok := n.(*parser.NumberLiteral); ok {
			r, _ := strconv.ParseFloat(strconv.FormatFloat(nl.Val, 'g', 12, 64), 64)
			if !math.IsNaN(r) {
				nl.Val = r
			}
		}
		return nil
	})
	return strings.TrimSpace(e.String())
}
