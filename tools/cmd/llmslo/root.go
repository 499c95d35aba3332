// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"

	"github.com/spf13/cobra"

	llmsloprocessor "github.com/llmslo/llmslo"
	"github.com/llmslo/llmslo/tools/internal/collectorconfig"
	"github.com/llmslo/llmslo/tools/internal/slorules"
)

// newRootCommand is the llmslo command with every subcommand.
func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "llmslo",
		Short: "SLO rules, alerts and dashboards from an llmslo collector configuration",
		Long: `llmslo reads a collector configuration file (the YAML the collector runs) and works
from every llm_slo processor in it (llm_slo and llm_slo/<name>): the same SLOs that judge
the spans drive the rules, alerts and dashboards, and the offline report over stored traces
(llmslo capture keeps them from a running collector), so the numbers cannot drift apart.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newRulesCommand(), newDashboardCommand(), newReportCommand(), newCaptureCommand())
	return root
}

// configFlag adds the --config flag every subcommand takes.
func configFlag(cmd *cobra.Command, path *string) {
	cmd.Flags().StringVarP(path, "config", "c", "", "collector configuration file (required)")
	_ = cmd.MarkFlagRequired("config")
}

// processorConfig is one llm_slo processor of a collector configuration.
type processorConfig = collectorconfig.Processor[*llmsloprocessor.Config]

// loadProcessors reads every llm_slo processor of the collector
// configuration at path, decoded and validated as the collector would.
func loadProcessors(ctx context.Context, path string) ([]processorConfig, error) {
	return collectorconfig.Load[*llmsloprocessor.Config](ctx, path, llmsloprocessor.NewFactory())
}

// loadSLOs reads the SLOs of every llm_slo processor of the collector
// configuration at path.
func loadSLOs(cmd *cobra.Command, path string) ([]slorules.SLO, error) {
	procs, err := loadProcessors(cmd.Context(), path)
	if err != nil {
		return nil, err
	}
	return slorules.FromProcessors(rulesInput(procs))
}

// rulesInput is what the rules read of each processor.
func rulesInput(procs []processorConfig) []slorules.Processor {
	out := make([]slorules.Processor, 0, len(procs))
	for _, p := range procs {
		out = append(out, slorules.NewProcessor(p.ID.String(), p.Config))
	}
	return out
}
