// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

// Command llmslo works from the collector's own configuration file: it
// prints the Prometheus rules (Sloth-compatible recording rules and
// multi-window multi-burn-rate alerts) and the Grafana dashboard of every
// SLO of its llm_slo processors.
//
//	llmslo rules --config config/collector.yaml > llmslo-rules.yaml
//	llmslo dashboard --config config/collector.yaml > llmslo-dashboard.json
package main

import (
	"fmt"
	"os"
)

func main() {
	if err := newRootCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "llmslo:", err)
		os.Exit(1)
	}
}
