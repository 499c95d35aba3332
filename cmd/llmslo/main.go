// Command llmslo works from the collector's own configuration: this file is
// a minimal root with the report commands only.
package main

import (
	"os"

	"github.com/spf13/cobra"
)

func main() {
	root := &cobra.Command{Use: "llmslo", Short: "SLO tooling for the llm_slo collector components", SilenceUsage: true}
	root.AddCommand(newReportCommand(), newCaptureCommand())
	if err := root.Execute(); err != nil {
		os.Exit(1)
	}
}
