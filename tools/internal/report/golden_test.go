// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	llmsloprocessor "github.com/llmslo/llmslo"
	"github.com/llmslo/llmslo/tools/internal/collectorconfig"
	"github.com/llmslo/llmslo/tools/internal/report/render"
)

var update = flag.Bool("update", false, "rewrite the vector files and golden reports")

func goldenOptions(t testing.TB) Options {
	return goldenOptionsWith(t, func(*llmsloprocessor.Config) {})
}

// goldenOptionsWith is goldenOptions with the processor's configuration
// changed by change.
func goldenOptionsWith(t testing.TB, change func(*llmsloprocessor.Config)) Options {
	procs, err := collectorconfig.Load[*llmsloprocessor.Config](context.Background(), "testdata/collector.yaml", llmsloprocessor.NewFactory())
	require.NoError(t, err)
	cfg := procs[0].Config
	change(cfg)
	require.NoError(t, cfg.Validate())
	return Options{Processor: NewProcessor(llmsloprocessor.NewFactory(), cfg), ProcessorID: "llm_slo (testdata/collector.yaml)"}
}

func runFiles(t *testing.T, opts Options, files ...string) *Report {
	r, err := Run(context.Background(), opts, Inputs{Paths: files}, nil, 0)
	require.NoError(t, err)
	return r
}

func checkGolden(t *testing.T, path string, got []byte) {
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to create it")
	require.Equal(t, string(want), string(got), "golden %s differs (go test -update rewrites it; review the diff)", path)
}

func TestGoldenReports(t *testing.T) {
	if *update {
		require.NoError(t, writeVectors("testdata/vectors"))
	}
	for _, name := range []string{"v1", "v2", "v3", "v4_rounding", "v4_percentiles", "v4_weighted"} {
		t.Run(name, func(t *testing.T) {
			r := runFiles(t, goldenOptions(t), filepath.Join("testdata/vectors", name+".json"))
			var txt, js bytes.Buffer
			require.NoError(t, render.WriteText(&txt, r))
			require.NoError(t, render.WriteJSON(&js, r))
			checkGolden(t, filepath.Join("testdata/golden", name+".txt"), txt.Bytes())
			checkGolden(t, filepath.Join("testdata/golden", name+".json"), js.Bytes())
		})
	}
}
