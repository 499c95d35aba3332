// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"github.com/spf13/cobra"

	"github.com/llmslo/llmslo/tools/internal/slorules"
)

func newRulesCommand() *cobra.Command {
	var (
		config, format string
		opts           slorules.Options
	)
	cmd := &cobra.Command{
		Use:   "rules --config FILE",
		Short: "Print the Prometheus rules of every SLO with an objective (or a Sloth, Pyrra or OpenSLO spec)",
		Long: `Prints a Prometheus rule file: for every SLO with an objective, the SLI error ratio over
5m, 30m, 1h, 2h, 6h, 1d, 3d and the period, the objective, error budget, burn rates and
budget remaining, named as Sloth names them (slo:sli_error:ratio_rate5m, ...,
slo:period_error_budget_remaining:ratio), and the multi-window multi-burn-rate alerts
LLMSLOErrorBudgetBurn (severity page: 1h/5m and 6h/30m; ticket: 1d/2h and 3d/6h; factors
from the period: 14.4, 6, 3, 1 for 30 days), and LLMSLOVerdictsUnknown (severity ticket)
when more than --unknown-share of an SLO's requests over 1h were undecidable.

The SLI is 1 - met/requests from the connector's counters, summed over every model, layer
and collector replica. Unknown verdicts count as not met, or, for an SLO with
unknown_verdicts: exclude, are left out of both sides (violated / (met + violated)).

--format sloth|pyrra|openslo prints the equivalent spec for those tools instead.`,
		Example: `  llmslo rules --config config/collector.yaml > llmslo-rules.yaml
  promtool check rules llmslo-rules.yaml
  llmslo rules --config config/collector.yaml --min-requests 100
  llmslo rules --config config/collector.yaml --format sloth > sloth-spec.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			slos, err := loadSLOs(cmd, config)
			if err != nil {
				return err
			}
			return slorules.Write(cmd.OutOrStdout(), format, config, slos, opts)
		},
	}
	configFlag(cmd, &config)
	f := cmd.Flags()
	f.StringVar(&format, "format", "prometheus", "output: prometheus (a rule file), sloth, pyrra or openslo (specs)")
	f.StringVar(&opts.Service, "service", "llmslo", "Sloth's service (the sloth_service label and the sloth_id prefix)")
	f.Float64Var(&opts.MinRequests, "min-requests", slorules.DefaultMinRequests,
		"minimum-traffic guard: no page while the alert's short window saw fewer requests than this (0: off, as Sloth)")
	f.Float64Var(&opts.UnknownShare, "unknown-share", slorules.DefaultUnknownShare, "share of an SLO's requests over 1h with an undecidable verdict above which LLMSLOVerdictsUnknown opens a ticket")
	f.StringArrayVar(&opts.Matchers, "matcher", nil, `extra label matcher on the connector's counters, e.g. 'deployment_environment_name="prod"' (repeatable)`)
	f.IntVar(&opts.WindowDivisor, "window-divisor", 1, "FOR TESTS ONLY: divide every PromQL range (windows and period) by this, keeping names and factors (60: the 1h/5m page reads 1m/5s)")
	return cmd
}
