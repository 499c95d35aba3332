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
	if err := execute(); err != nil {
		fmt.Fprintln(os.Stderr, "llmslo:", err)
		os.Exit(1)
	}
}

// execute runs the command. A panic is a bug, never the input's fault: it
// is reported as one line naming it, not as a stack trace (LLMSLO_PANIC=1
// lets it through, stack and all).
func execute() (err error) {
	if os.Getenv("LLMSLO_PANIC") == "" {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("internal error: %v (a bug: please report it with the command and its input; LLMSLO_PANIC=1 prints the stack)", r)
			}
		}()
	}
	return newRootCommand().Execute()
}
