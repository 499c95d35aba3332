// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloprocessor

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/ptracetest"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/llmslo/llmslo/internal/metadata"
)

var update = flag.Bool("update", false, "rewrite the expected golden files from the current output")

// process runs td through a processor built from the named configuration.
func process(t testing.TB, configName string, td ptrace.Traces) ptrace.Traces {
	t.Helper()
	cfg, err := loadConfigF(t, configName)
	require.NoError(t, err)
	return processWith(t, cfg, processortest.NewNopSettings(metadata.Type), td)
}

func processWith(t testing.TB, cfg *Config, set processor.Settings, td ptrace.Traces) ptrace.Traces {
	t.Helper()
	sink := new(consumertest.TracesSink)
	p, err := NewFactory().CreateTraces(context.Background(), set, cfg, sink)
	require.NoError(t, err)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	require.NoError(t, p.ConsumeTraces(context.Background(), td))
	require.NoError(t, p.Shutdown(context.Background()))
	require.Len(t, sink.AllTraces(), 1)
	return sink.AllTraces()[0]
}

// TestGolden runs every producer's sample traces through the processor and
// compares the result with the expected file beside them. The expected
// values are checked by hand in TestDerivedValues; this test pins the whole
// output, attribute for attribute.
func TestGolden(t *testing.T) {
	cases := []struct {
		dir, config, expected string
	}{
		{"vllm", "golden", "expected.yaml"},
		{"sglang", "golden", "expected.yaml"},
		{"trtllm", "golden", "expected.yaml"},
		{"openllmetry", "golden", "expected.yaml"},
		{"openllmetry_legacy", "golden", "expected.yaml"},
		{"openlit", "golden", "expected.yaml"},
		{"openinference", "golden", "expected.yaml"},
		{"semconv", "golden", "expected.yaml"},
		{"langfuse", "golden", "expected.yaml"},
		{"litellm", "golden", "expected.yaml"},
		{"v1", "golden", "expected.yaml"},
		{"v3", "golden", "expected.yaml"},
		{"v3", "token_aware", "expected_token_aware.yaml"},
		{"non_llm", "golden", "expected.yaml"},
		{"hostile", "golden", "expected.yaml"},
	}
	for _, tc := range cases {
		t.Run(tc.dir+"/"+tc.config, func(t *testing.T) {
			dir := filepath.Join("testdata", "traces", tc.dir)
			input, err := golden.ReadTraces(filepath.Join(dir, "input.yaml"))
			require.NoError(t, err)
			got := process(t, tc.config, input)
			expectedFile := filepath.Join(dir, tc.expected)
			if *update {
				require.NoError(t, golden.WriteTracesToFile(expectedFile, got))
			}
			want, err := golden.ReadTraces(expectedFile)
			require.NoError(t, err)
			require.NoError(t, ptracetest.CompareTraces(want, got))
		})
	}
}

// TestIdempotent: a span processed twice (two collector tiers) comes out as
// if processed once.
func TestIdempotent(t *testing.T) {
	for _, dir := range []string{"vllm", "openllmetry", "semconv", "v1", "hostile"} {
		t.Run(dir, func(t *testing.T) {
			input, err := golden.ReadTraces(filepath.Join("testdata", "traces", dir, "input.yaml"))
			require.NoError(t, err)
			once := process(t, "golden", input)
			again := ptrace.NewTraces()
			once.CopyTo(again)
			twice := process(t, "golden", again)
			require.NoError(t, ptracetest.CompareTraces(once, twice))
		})
	}
}

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(m.Run())
}
