package main

import (
	"errors"

	"github.com/spf13/cobra"
)

func newDashboardCommand() *cobra.Command {
	var config string
	cmd := &cobra.Command{
		Use:   "dashboard --config FILE",
		Short: "Print the Grafana dashboard of the SLOs and latencies",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return errors.New("not yet")
		},
	}
	configFlag(cmd, &config)
	return cmd
}
