// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/llmslo/llmslo/tools/internal/dashboard"
)

func newDashboardCommand() *cobra.Command {
	var (
		config string
		opts   dashboard.Options
	)
	cmd := &cobra.Command{
		Use:   "dashboard --config FILE",
		Short: "Print the Grafana dashboard (JSON) of the SLOs and latencies",
		Long: `Prints a Grafana dashboard, built with the Grafana Foundation SDK: per SLO the goodput
against the objective, the error budget remaining and burn rates (from the recording rules of
'llmslo rules', which must be loaded), goodput by model and layer, violations by constraint
and, per SLO, why it misses (violations by constraint and cause, stacked), good requests/s and
token goodput; per model and layer P50/P90/P99 of TTFT, TPOT, ITL and E2E
from the connector's native histograms. Template variables: datasource, SLO, model, layer.`,
		Example: `  llmslo dashboard --config config/collector.yaml > llmslo-dashboard.json`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			slos, err := loadSLOs(cmd, config)
			if err != nil {
				return err
			}
			d, err := dashboard.Build(slos, opts)
			if err != nil {
				return err
			}
			b, err := json.MarshalIndent(d, "", "  ")
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), string(b))
			return err
		},
	}
	configFlag(cmd, &config)
	f := cmd.Flags()
	f.StringVar(&opts.Title, "title", "LLM SLOs", "dashboard title")
	f.StringVar(&opts.UID, "uid", "llmslo", "dashboard UID")
	f.StringVar(&opts.Rules.Service, "service", "llmslo", "the --service the rules were generated with")
	f.StringArrayVar(&opts.Rules.Matchers, "matcher", nil, "the --matcher the rules were generated with (repeatable)")
	return cmd
}
