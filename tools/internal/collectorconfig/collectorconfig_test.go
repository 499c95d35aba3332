// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package collectorconfig

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/processor"
)

// testConfig stands for the llm_slo processor's configuration: defaults,
// nested fields, durations and its own validation.
type testConfig struct {
	AttributePrefix string    `mapstructure:"attribute_prefix"`
	SLOs            []testSLO `mapstructure:"slos"`
}

type testSLO struct {
	Name string         `mapstructure:"name"`
	TTFT *time.Duration `mapstructure:"ttft"`
	E2E  *time.Duration `mapstructure:"e2e"`
}

func (c *testConfig) Validate() error {
	for _, s := range c.SLOs {
		if strings.ToLower(s.Name) != s.Name {
			return errors.New("slos: name " + s.Name + " is not lower case")
		}
	}
	return nil
}

var factory = processor.NewFactory(component.MustNewType("llm_slo"),
	func() component.Config { return &testConfig{AttributePrefix: "llm."} })

func load(ctx context.Context, path string) ([]Processor[*testConfig], error) {
	return Load[*testConfig](ctx, path, factory)
}

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
	got, err := load(context.Background(), path)
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
			_, err := load(context.Background(), write(t, tt.body))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
	// Two errors, in processor order on every run.
	two := write(t, "processors:\n  llm_slo/b: {sloz: []}\n  llm_slo/a: {slos: [{name: Bad}]}\n")
	for range 20 {
		_, err := load(context.Background(), two)
		if err == nil || !strings.HasPrefix(err.Error(), two+": processors::llm_slo/a: slos: name Bad") || !strings.Contains(err.Error(), "\n"+two+": processors::llm_slo/b: ") {
			t.Fatalf("err = %v", err)
		}
	}
	if _, err := load(context.Background(), filepath.Join(t.TempDir(), "missing.yaml")); err == nil {
		t.Fatal("a missing file must be an error")
	}
}

// TestLoadWrongType: a factory whose configuration is not the type asked
// for is an error, not a panic.
func TestLoadWrongType(t *testing.T) {
	path := write(t, "processors:\n  llm_slo: {}\n")
	_, err := Load[*otherConfig](context.Background(), path, factory)
	if err == nil || !strings.Contains(err.Error(), "the llm_slo factory's configuration is a *collectorconfig.testConfig") {
		t.Fatalf("err = %v", err)
	}
}

type otherConfig struct{}

func (*otherConfig) Validate() error { return nil }
