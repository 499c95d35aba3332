// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// connectorConfigTemplate is one processor (SLO interactive) and the
// connector, with the processor's and the connector's settings to try
// (each indented by four spaces).
const connectorConfigTemplate = `
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:0
processors:
  llm_slo:
    slos:
%s
connectors:
  llm_slo:
    metrics_flush_interval: 1s
%s
exporters:
  debug: {}
service:
  pipelines:
    traces:
      receivers: [otlp]
      processors: [llm_slo]
      exporters: [llm_slo]
    metrics:
      receivers: [llm_slo]
      exporters: [debug]
  telemetry:
    metrics:
      level: none
`

const interactiveSLO = "      - {name: interactive, ttft: 500ms, tpot: 50ms, e2e: 10s}"

// TestConnectorSettingsRefused: what the configuration alone decides is
// refused by `validate`; what only the collector's processors decide (a
// pressure SLO no processor judges, a threshold contradicting the
// processor's, a prefix no processor writes under) fails the collector's
// start, each with a message naming the setting. A setting the processor
// agrees with starts.
func TestConnectorSettingsRefused(t *testing.T) {
	bin := collectorBinary(t)
	for _, tt := range []struct {
		name, slos, connector string
		validate              string // the validate error, "" when validate passes
		start                 string // the start error, "" when the collector runs
	}{
		{name: "quantile without slos", slos: interactiveSLO, connector: "    pressure: {quantile: 5}",
			validate: "pressure.quantile: 5 must be between 0 and 1"},
		{name: "fractional token class", slos: interactiveSLO, connector: "    input_token_classes: [1.5, 4096]",
			validate: "input_token_classes[0]: 1.5 is not a whole number"},
		{name: "token class above the bound", slos: interactiveSLO, connector: "    input_token_classes: [1024, 20000000]",
			validate: "input_token_classes[1]: 20000000 must be at most 16777216"},
		{name: "1ns threshold", slos: interactiveSLO, connector: "    pressure: {slos: [{name: interactive, ttft: 1ns}]}",
			validate: "pressure.slos[0].ttft: 1ns must be between 100µs and 168h0m0s"},
		{name: "200h threshold", slos: interactiveSLO, connector: "    pressure: {slos: [{name: interactive, e2e: 200h}]}",
			validate: "pressure.slos[0].e2e: 200h0m0s must be between 100µs and 168h0m0s"},
		{name: "slo for slos", slos: interactiveSLO, connector: "    pressure: {slo: [interactive]}",
			validate: "pressure.slo: unknown key: did you mean slos?"},
		{name: "tffT on the processor", slos: "      - {name: interactive, tffT: 500ms}", connector: "",
			validate: "slos[0].tffT: unknown key: did you mean ttft?"},
		{name: "removed token_aware_itl", slos: interactiveSLO, connector: "    token_aware_itl: true",
			validate: "token_aware_itl: unknown key"},
		{name: "pressure name no processor judges", slos: interactiveSLO, connector: "    pressure: {slos: [interactiv]}",
			start: `pressure.slos[0]: "interactiv" is judged by no llm_slo processor of this collector (llm_slo judge interactive), so its pressure would never be written: did you mean interactive?`},
		{name: "contradicting threshold", slos: interactiveSLO, connector: "    pressure: {slos: [{name: interactive, ttft: 400ms}]}",
			start: `pressure.slos[0].ttft: 400ms contradicts llm_slo, which judges SLO "interactive" with ttft 500ms`},
		{name: "prefix no processor writes under", slos: interactiveSLO, connector: "    attribute_prefix: acme.",
			start: `attribute_prefix: "acme.", but the llm_slo processors of this collector write under "llm." (llm_slo)`},
		{name: "by name", slos: interactiveSLO, connector: "    pressure: {slos: [interactive]}"},
		{name: "written and equal", slos: interactiveSLO, connector: "    pressure: {slos: [{name: interactive, ttft: 500ms}]}"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := filepath.Join(t.TempDir(), "config.yaml")
			require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf(connectorConfigTemplate, tt.slos, tt.connector)), 0o600))
			out, err := exec.Command(bin, "validate", "--config", cfg).CombinedOutput()
			if tt.validate != "" {
				require.Error(t, err, "validate accepted it:\n%s", out)
				assert.Contains(t, string(out), tt.validate)
				return
			}
			require.NoError(t, err, "validate:\n%s", out)
			// Run it: a start error ends the process; a good configuration
			// is still running after a few seconds.
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			out, err = exec.CommandContext(ctx, bin, "--config", cfg).CombinedOutput()
			if tt.start == "" {
				assert.ErrorIs(t, ctx.Err(), context.DeadlineExceeded, "the collector stopped:\n%s", out)
				return
			}
			require.NoError(t, ctx.Err(), "the collector started:\n%s", out)
			require.Error(t, err)
			assert.Contains(t, string(out), tt.start)
		})
	}
}
