// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package collectorconfig

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func write(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoad(t *testing.T) {
	t.Setenv("LLMSLO_TEST_TTFT", "750ms")
	path := write(t, `
processors:
  batch: {}
  llm_slo/edge:
    slos:
      - name: chat
        ttft: ${env:LLMSLO_TEST_TTFT}
  llm_slo:
    attribute_prefix: "x."
    slos:
      - name: batch
        e2e: 30s
exporters:
  otlp_grpc:
    endpoint: ${env:UNSET_ENDPOINT}
`)
	got, err := Load(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("got %d processors, want 2", len(got))
	}
	if got[0].ID.String() != "llm_slo" || got[0].Config.AttributePrefix != "x." || *got[0].Config.SLOs[0].E2E != 30*time.Second {
		t.Errorf("first = %s %+v", got[0].ID, got[0].Config)
	}
	if got[1].ID.String() != "llm_slo/edge" || got[1].Config.AttributePrefix != "llm." || *got[1].Config.SLOs[0].TTFT != 750*time.Millisecond {
		t.Errorf("second = %s %+v", got[1].ID, got[1].Config)
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"none", "processors:\n  batch: {}\n", "no llm_slo processor"},
		{"no processors", "receivers: {}\n", "no llm_slo processor"},
		{"invalid", "processors:\n  llm_slo/x:\n    slos:\n      - name: Bad\n        ttft: 1s\n", "processors::llm_slo/x"},
		{"unknown field", "processors:\n  llm_slo:\n    sloz: []\n", "sloz"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(context.Background(), write(t, tt.body))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
	if _, err := Load(context.Background(), filepath.Join(t.TempDir(), "missing.yaml")); err == nil {
		t.Fatal("a missing file must be an error")
	}
}

func TestLoadShippedConfigs(t *testing.T) {
	for _, f := range []string{"../../config/collector.yaml", "../../config/demo.yaml"} {
		got, err := Load(context.Background(), f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if len(got[0].Config.SLOs) == 0 {
			t.Errorf("%s: no SLOs", f)
		}
	}
}
