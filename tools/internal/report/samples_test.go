// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmslo/llmslo/tools/internal/report/render"
)

// sampleDirs are the processor's golden cases (../../testdata/traces).
func sampleDirs(t *testing.T) []string {
	dirs, err := filepath.Glob("../../../testdata/traces/*")
	require.NoError(t, err)
	require.NotEmpty(t, dirs)
	return dirs
}

func reportOf(t *testing.T, file string) []byte {
	e, err := NewEngine(context.Background(), goldenOptions(t))
	require.NoError(t, err)
	for _, dir := range sampleDirs(t) {
		path := filepath.Join(dir, file)
		if _, err := os.Stat(path); err != nil {
			continue
		}
		td, err := golden.ReadTraces(path)
		require.NoError(t, err, path)
		require.NoError(t, e.Consume(context.Background(), td))
	}
	require.NoError(t, e.Close(context.Background()))
	var b bytes.Buffer
	require.NoError(t, render.WriteJSON(&b, e.Report([]string{"testdata/traces"})))
	return b.Bytes()
}

// TestRawAndEnrichedGiveTheSameReport: the producers' raw spans and the same
// spans as a collector's llm_slo processor wrote them (the golden expected
// files) give byte-identical reports.
func TestRawAndEnrichedGiveTheSameReport(t *testing.T) {
	raw, enriched := reportOf(t, "input.yaml"), reportOf(t, "expected.yaml")
	require.Equal(t, string(raw), string(enriched))
}

// TestGoldenSamples: the report of every producer's sample spans (vLLM,
// SGLang, TensorRT-LLM, OpenLLMetry, OpenLIT, OpenInference, semconv,
// LiteLLM, Langfuse, the vectors, hostile input, a non-LLM span).
func TestGoldenSamples(t *testing.T) {
	js := reportOf(t, "input.yaml")
	checkGolden(t, "testdata/golden/samples.json", js)
	var r Report
	require.NoError(t, json.Unmarshal(js, &r))
	var txt bytes.Buffer
	require.NoError(t, render.WriteText(&txt, &r))
	checkGolden(t, "testdata/golden/samples.txt", txt.Bytes())
}

var _ = ptrace.NewTraces
