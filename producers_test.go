package llmsloprocessor

import (
	"path/filepath"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/ptracetest"
	"github.com/stretchr/testify/require"
)

// producerGoldens are the producers added in 2026 (and the streaming rule
// by convention version), one directory each, processed with the golden
// configuration. Their expected values are checked by hand in
// internal/derive (TestProducers2026).
var producerGoldens = []string{
	"strands", "unit_collision", "vercel_ai", "semconv_v141", "stream_schema",
	"sentry", "pydantic_ai", "vllm_usage",
}

func TestGoldenProducers(t *testing.T) {
	for _, dir := range producerGoldens {
		t.Run(dir, func(t *testing.T) {
			compareGolden(t, filepath.Join("testdata", "traces", dir), "input.yaml", "expected.yaml")
		})
	}
}

func compareGolden(t *testing.T, dir, input, expected string) {
	t.Helper()
	in, err := golden.ReadTraces(filepath.Join(dir, input))
	require.NoError(t, err)
	got := process(t, "golden", in)
	if *update {
		require.NoError(t, golden.WriteTracesToFile(filepath.Join(dir, expected), got))
	}
	want, err := golden.ReadTraces(filepath.Join(dir, expected))
	require.NoError(t, err)
	require.NoError(t, ptracetest.CompareTraces(want, got))
}
