// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloprocessor

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/llmslo/llmslo/internal/contract"
	"github.com/llmslo/llmslo/internal/metadata"
)

// TestPartsModes: parts: auto writes the parts only when an SLO bounds TTFT
// or E2E; always and never regardless. Counted on the vLLM and TRT-LLM
// golden inputs, whose engine spans carry prefill, decode and KV transfer.
func TestPartsModes(t *testing.T) {
	ttft, tpot := 500*time.Millisecond, 15*time.Millisecond
	ttftSLO := []SLOConfig{{Name: "fast", TTFT: &ttft}}
	e2eFromSLO := []SLOConfig{{Name: "fast", E2EFrom: &ThresholdFrom{Key: "x-slo-e2e", Unit: "ms", Max: &ttft}}}
	tpotSLO := []SLOConfig{{Name: "smooth", TPOT: &tpot}}
	tests := []struct {
		name, parts string
		slos        []SLOConfig
		want        map[string]int // spans carrying each part, summed over both inputs (as their goldens)
	}{
		{"auto_ttft", PartsAuto, ttftSLO, map[string]int{"prefill_time": 1, "decode_time": 1, "kv_transfer_time": 1}},
		{"auto_e2e_from", PartsAuto, e2eFromSLO, map[string]int{"prefill_time": 1, "decode_time": 1, "kv_transfer_time": 1}},
		{"auto_tpot_only", PartsAuto, tpotSLO, map[string]int{}},
		{"auto_no_slo", PartsAuto, nil, map[string]int{}},
		{"always_no_slo", PartsAlways, nil, map[string]int{"prefill_time": 1, "decode_time": 1, "kv_transfer_time": 1}},
		{"never_ttft", PartsNever, ttftSLO, map[string]int{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			cfg.Parts, cfg.SLOs = tt.parts, tt.slos
			require.NoError(t, cfg.Validate())
			got := map[string]int{}
			for _, dir := range []string{"vllm", "trtllm"} {
				input, err := golden.ReadTraces(filepath.Join("testdata", "traces", dir, "input.yaml"))
				require.NoError(t, err)
				countParts(processWith(t, cfg, processortest.NewNopSettings(metadata.Type), input), got)
			}
			require.Equal(t, tt.want, got)
		})
	}
}

func countParts(td ptrace.Traces, into map[string]int) {
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, span := range ss.Spans().All() {
				for _, part := range []string{"prefill_time", "kv_transfer_time", "decode_time", "network_time"} {
					if _, ok := span.Attributes().Get(contract.DefaultPrefix + part); ok {
						into[part]++
					}
				}
			}
		}
	}
}
