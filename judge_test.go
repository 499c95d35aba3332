// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloprocessor

import (
	"path/filepath"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/ptracetest"
	"github.com/stretchr/testify/require"
)

// TestGoldenPerRequest: requests carrying their own objectives (headers as
// the HTTP conventions record them, strings, numbers, malformed values)
// judged in one stream; the input's header says what each span shows. It
// lives outside testdata/traces, which holds one case per producer.
func TestGoldenPerRequest(t *testing.T) {
	dir := filepath.Join("testdata", "slos", "per_request")
	input, err := golden.ReadTraces(filepath.Join(dir, "input.yaml"))
	require.NoError(t, err)
	got := process(t, "per_request", input)
	expectedFile := filepath.Join(dir, "expected.yaml")
	if *update {
		require.NoError(t, golden.WriteTracesToFile(expectedFile, got))
	}
	want, err := golden.ReadTraces(expectedFile)
	require.NoError(t, err)
	require.NoError(t, ptracetest.CompareTraces(want, got))
}

// TestGoldenInputTokens: one workload split by prompt size into two SLOs
// with their own TTFT bounds, and one SLO on answer length; the input's
// header says what each span shows (an unknown count selects neither).
func TestGoldenInputTokens(t *testing.T) {
	dir := filepath.Join("testdata", "slos", "input_tokens")
	input, err := golden.ReadTraces(filepath.Join(dir, "input.yaml"))
	require.NoError(t, err)
	got := process(t, "input_tokens", input)
	expectedFile := filepath.Join(dir, "expected.yaml")
	if *update {
		require.NoError(t, golden.WriteTracesToFile(expectedFile, got))
	}
	want, err := golden.ReadTraces(expectedFile)
	require.NoError(t, err)
	require.NoError(t, ptracetest.CompareTraces(want, got))
}

// causeGoldens are the cause rules (README, Decisions, "Why a request
// missed"), one directory each under testdata/slos/causes; each input's
// header gives the expected causes of every span.
var causeGoldens = []string{
	"ttft_largest_part", "ttft_unattributed", "pace_decode", "e2e_output_length",
	"e2e_decode", "e2e_ttft_part", "queue_time", "network", "parts_beyond_whole",
}

func TestGoldenCauses(t *testing.T) {
	for _, dir := range causeGoldens {
		t.Run(dir, func(t *testing.T) {
			dir := filepath.Join("testdata", "slos", "causes", dir)
			input, err := golden.ReadTraces(filepath.Join(dir, "input.yaml"))
			require.NoError(t, err)
			got := process(t, "causes", input)
			expectedFile := filepath.Join(dir, "expected.yaml")
			if *update {
				require.NoError(t, golden.WriteTracesToFile(expectedFile, got))
			}
			want, err := golden.ReadTraces(expectedFile)
			require.NoError(t, err)
			require.NoError(t, ptracetest.CompareTraces(want, got))
		})
	}
}
