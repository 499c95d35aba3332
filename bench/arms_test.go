// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"text/template"

	"github.com/stretchr/testify/require"
)

// An arm is one collector the load benchmark compares: which distribution
// runs and what sits in its traces pipeline. Every arm has the same
// receiver (OTLP/HTTP), batch processor and exporter (debug, printing
// nothing, unless traceExporter sends the spans on over OTLP/HTTP), so the
// differences between arms are the components alone.
type arm struct {
	name string
	// peer: the contrib-only distribution (bench/peer), else the project's.
	peer bool
	// processors are configured processors (YAML under `processors:`) and
	// the names placed before batch in the traces pipeline.
	processors      string
	pipelineBefore  []string
	connectors      string // a top-level `connectors:` section
	connector       string // the traces → metrics connector, "" for none
	metricsExporter string // where the connector's metrics go: debug unless set
	// traceExporter is where the spans go over OTLP/HTTP (uncompressed):
	// debug unless set. With it an arm pays for encoding what it wrote on
	// the spans, as a collector that forwards them does.
	traceExporter string
}

// llmSLOProcessor and llmSLOConnector are the pair as the benchmark runs it:
// one SLO over the three constraints the peer's good counter also checks.
const (
	llmSLOProcessor = `  llm_slo:
    slos:
      - name: interactive
        ttft: 500ms
        tpot: 15ms
        e2e: 2s
`
	llmSLOConnector = `connectors:
  llm_slo:
    metrics_flush_interval: 5s
`
)

// armNames are the load benchmark's arms, in the order of the first round.
var armNames = []string{"without_llmslo", "with_llmslo", "peer_passthrough", "peer_span_metrics", "peer_signal_to_metrics"}

// armByName returns the arm of the given name; the peer's connectors are
// read from bench/peer, where a reader finds them as YAML.
func armByName(t testing.TB, name string) arm {
	peerFile := func(f string) string {
		b, err := os.ReadFile(filepath.Join("peer", f))
		require.NoError(t, err)
		return string(b)
	}
	switch name {
	case "without_llmslo":
		return arm{name: name}
	case "with_llmslo":
		return arm{name: name, processors: llmSLOProcessor, pipelineBefore: []string{"llm_slo"}, connectors: llmSLOConnector, connector: "llm_slo"}
	case "peer_passthrough":
		return arm{name: name, peer: true}
	case "peer_span_metrics":
		return arm{name: name, peer: true, connectors: peerFile("span_metrics.yaml"), connector: "span_metrics"}
	case "peer_signal_to_metrics":
		return arm{name: name, peer: true, connectors: peerFile("signal_to_metrics.yaml"), connector: "signal_to_metrics"}
	}
	t.Fatalf("no arm %q (arms: %s)", name, strings.Join(armNames, ", "))
	return arm{}
}

// binary is the collector the arm runs: the project's distribution (make
// dist) or the peer (bench/peer/build.sh).
func (a arm) binary(t testing.TB) string {
	path := filepath.Join("..", "dist", "otelcol-llmslo")
	if a.peer {
		path = filepath.Join("peer", "dist", "otelcol-peer")
	}
	abs, err := filepath.Abs(path)
	require.NoError(t, err)
	return abs
}

var configTemplate = template.Must(template.New("config").Parse(`
receivers:
  otlp:
    protocols:
      http:
        endpoint: {{.Addr}}
processors:
  batch:
{{.Arm.Processors}}
{{- .Arm.Connectors}}
exporters:
  debug:
    verbosity: basic
    sampling_initial: 0
    sampling_thereafter: 1000000
{{- if .Arm.MetricsExporter}}
  otlp_http:
    endpoint: {{.Arm.MetricsExporter}}
    compression: none
{{- end}}
{{- if .Arm.TraceExporter}}
  otlp_http/traces:
    endpoint: {{.Arm.TraceExporter}}
    compression: none
{{- end}}
extensions:
  pprof:
    endpoint: {{.PprofAddr}}
service:
  extensions: [pprof]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [{{range .Arm.PipelineBefore}}{{.}}, {{end}}batch]
      exporters: [{{if .Arm.TraceExporter}}otlp_http/traces{{else}}debug{{end}}{{with .Arm.Connector}}, {{.}}{{end}}]
{{- with .Arm.Connector}}
    metrics:
      receivers: [{{.}}]
      exporters: [{{if $.Arm.MetricsExporter}}otlp_http{{else}}debug{{end}}]
{{- end}}
  telemetry:
    logs:
      level: warn
    metrics:
      level: normal
      readers:
        - pull:
            exporter:
              prometheus:
                host: 127.0.0.1
                port: {{.TelPort}}
`))

// config renders the arm's collector configuration on the given ports:
// addr receives OTLP/HTTP, telPort serves the collector's own metrics
// (where the test reads what was accepted and exported), pprofAddr its
// profiles.
func (a arm) config(t testing.TB, addr string, telPort int, pprofAddr string) string {
	var b strings.Builder
	require.NoError(t, configTemplate.Execute(&b, map[string]any{
		"Addr": addr, "TelPort": telPort, "PprofAddr": pprofAddr,
		"Arm": map[string]any{
			"Processors": a.processors, "PipelineBefore": a.pipelineBefore, "Connectors": a.connectors,
			"Connector": a.connector, "MetricsExporter": a.metricsExporter,
			"TraceExporter": a.traceExporter,
		},
	}))
	return b.String()
}

// TestArmConfigs checks every arm's configuration with its own
// distribution's validate command, for the distributions that are built.
func TestArmConfigs(t *testing.T) {
	for _, name := range armNames {
		t.Run(name, func(t *testing.T) {
			a := armByName(t, name)
			if _, err := os.Stat(a.binary(t)); err != nil {
				t.Skipf("not built: %v", err)
			}
			cfg := filepath.Join(t.TempDir(), "config.yaml")
			require.NoError(t, os.WriteFile(cfg, []byte(a.config(t, "127.0.0.1:4318", 8888, "127.0.0.1:1777")), 0o600))
			out, err := exec.Command(a.binary(t), "validate", "--config", cfg).CombinedOutput()
			require.NoError(t, err, "%s", out)
		})
	}
}
