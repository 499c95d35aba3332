package llmsloconnector

import (
	"context"
	"flag"
	"path/filepath"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/pmetrictest"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmslo/llmslo/internal/metadata"
)

var update = flag.Bool("update", false, "rewrite the expected golden files from the current output")

func loadConfig(t testing.TB, name string) (*Config, error) {
	t.Helper()
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	id := component.NewID(metadata.Type)
	if name != "" {
		id = component.NewIDWithName(metadata.Type, name)
	}
	sub, err := cm.Sub(id.String())
	require.NoError(t, err)
	cfg := createDefaultConfig().(*Config)
	require.NoError(t, sub.Unmarshal(cfg))
	return cfg, confmap.Validate(cfg)
}

// goldenInput is the processor's output on its own golden inputs: engine,
// client-with-chunks, semconv (including unknown and failed requests), and
// an assembled SGLang trace whose gaps travel in llm.itl.gaps.
func goldenInput(t testing.TB) ptrace.Traces {
	td := ptrace.NewTraces()
	for _, dir := range []string{"vllm", "openllmetry", "semconv", "v3", "sglang_trace"} {
		in, err := golden.ReadTraces(filepath.Join("..", "testdata", "traces", dir, "expected.yaml"))
		require.NoError(t, err)
		in.ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
	}
	return td
}

// fixedNow is the connector clock of the golden tests.
var fixedNow = time.Date(2026, 1, 1, 0, 0, 30, 0, time.UTC)

func newTestConnector(t testing.TB, cfg *Config, sink *consumertest.MetricsSink) *llmSLOConnector {
	c, err := newConnector(connectortest.NewNopSettings(metadata.Type).TelemetrySettings, cfg, sink)
	require.NoError(t, err)
	c.now = func() time.Time { return fixedNow }
	return c
}

func TestGolden(t *testing.T) {
	for _, name := range []string{"golden", "explicit", "delta", "cardinality"} {
		t.Run(name, func(t *testing.T) {
			cfg, err := loadConfig(t, name)
			require.NoError(t, err)
			sink := new(consumertest.MetricsSink)
			c := newTestConnector(t, cfg, sink)
			require.NoError(t, c.ConsumeTraces(context.Background(), goldenInput(t)))
			c.flush(context.Background())
			require.Len(t, sink.AllMetrics(), 1)
			got := sink.AllMetrics()[0]
			file := filepath.Join("testdata", "golden", name+".yaml")
			if *update {
				require.NoError(t, golden.WriteMetricsToFile(file, got))
			}
			want, err := golden.ReadMetrics(file)
			require.NoError(t, err)
			require.NoError(t, pmetrictest.CompareMetrics(want, got,
				pmetrictest.IgnoreMetricsOrder(), pmetrictest.IgnoreMetricDataPointsOrder(),
				pmetrictest.IgnoreResourceMetricsOrder(), pmetrictest.IgnoreTimestamp(), pmetrictest.IgnoreStartTimestamp()))
		})
	}
}

var _ = pmetric.NewMetrics
