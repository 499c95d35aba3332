// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap/confmaptest"
)

// TestInstallFromReadme follows the README's install path as a stranger
// would: in a fresh directory outside the repository, with the repository
// at ./llmslo (a symbolic link to this working tree stands in for the
// clone, so uncommitted changes are what gets built), it writes the
// README's builder manifest verbatim, runs `builder --config builder.yaml`
// there, and checks that the distribution lists the llm_slo processor and
// connector and accepts a configuration that uses both, and the README's
// production-shaped configuration.
func TestInstallFromReadme(t *testing.T) {
	builder := findBuilder(t)
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	manifest := readmeBlock(t, string(readme), "<!-- install manifest", "```yaml")

	repo, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	dir := t.TempDir()
	require.False(t, strings.HasPrefix(dir, repo+string(filepath.Separator)), "the temporary directory must be outside the repository")
	require.NoError(t, os.Symlink(repo, filepath.Join(dir, "llmslo")))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "builder.yaml"), []byte(manifest), 0o600))

	build := exec.Command(builder, "--config", "builder.yaml")
	build.Dir = dir
	out, err := build.CombinedOutput()
	require.NoError(t, err, "builder --config builder.yaml:\n%s", out)

	m, err := confmaptest.LoadConf(filepath.Join(dir, "builder.yaml"))
	require.NoError(t, err)
	bin := filepath.Join(dir, m.Get("dist::output_path").(string), m.Get("dist::name").(string))

	checkComponents(t, bin)
	checkValidates(t, bin)
	checkRunsReadmeConfig(t, bin, readmeBlock(t, string(readme), "<!-- production config", "```yaml"))
}

// checkRunsReadmeConfig: the distribution the README's manifest builds
// accepts the README's production-shaped configuration as it stands (it
// once lacked memory_limiter, otlp_grpc and health_check).
func checkRunsReadmeConfig(t *testing.T, bin, config string) {
	cfg := filepath.Join(t.TempDir(), "collector.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(config), 0o600))
	out, err := exec.Command(bin, "validate", "--config", cfg).CombinedOutput()
	assert.NoError(t, err, "validate the README's production-shaped configuration:\n%s", out)
}

// checkComponents: the distribution lists llm_slo once as a processor and
// once as a connector, both from this module.
func checkComponents(t *testing.T, bin string) {
	out, err := exec.Command(bin, "components").CombinedOutput()
	require.NoError(t, err, "%s components:\n%s", bin, out)
	components := filepath.Join(t.TempDir(), "components.yaml")
	require.NoError(t, os.WriteFile(components, out, 0o600))
	listed, err := confmaptest.LoadConf(components)
	require.NoError(t, err, "components output:\n%s", out)
	for _, kind := range []string{"processors", "connectors"} {
		var modules []string
		list, _ := listed.Get(kind).([]any)
		for _, c := range list {
			if c, ok := c.(map[string]any); ok && c["name"] == "llm_slo" {
				modules = append(modules, c["module"].(string))
			}
		}
		assert.Equal(t, []string{"github.com/llmslo/llmslo v0.0.0"}, modules, "llm_slo among the %s:\n%s", kind, out)
	}
}

// checkValidates: a configuration wiring the processor into the connector
// is accepted.
func checkValidates(t *testing.T, bin string) {
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(`
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:4317
processors:
  llm_slo:
    slos:
      - {name: interactive, ttft: 500ms, tpot: 15ms, e2e: 2s}
connectors:
  llm_slo:
exporters:
  debug:
service:
  pipelines:
    traces:
      receivers: [otlp]
      processors: [llm_slo]
      exporters: [llm_slo]
    metrics:
      receivers: [llm_slo]
      exporters: [debug]
`), 0o600))
	out, err := exec.Command(bin, "validate", "--config", cfg).CombinedOutput()
	assert.NoError(t, err, "validate:\n%s", out)
}

// findBuilder returns the collector builder from PATH or GOPATH/bin;
// without one the test skips (fails under CI, where .ci/run installs it).
func findBuilder(t *testing.T) string {
	if path, err := exec.LookPath("builder"); err == nil {
		return path
	}
	if gopath, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		path := filepath.Join(strings.TrimSpace(string(gopath)), "bin", "builder")
		if _, err := os.Stat(path); err == nil {
			return path
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("the collector builder is not installed: go install go.opentelemetry.io/collector/cmd/builder@v0.165.0")
	}
	t.Skip("the collector builder is not installed")
	return ""
}

// readmeBlock returns the body of the first fenced block opened by fence
// after the line starting with marker.
func readmeBlock(t *testing.T, readme, marker, fence string) string {
	lines := strings.Split(readme, "\n")
	for i := range lines {
		if !strings.HasPrefix(lines[i], marker) {
			continue
		}
		j := i + 1
		for j < len(lines) && strings.TrimSpace(lines[j]) != fence {
			j++
		}
		var body []string
		for j++; j < len(lines) && strings.TrimSpace(lines[j]) != "```"; j++ {
			body = append(body, lines[j])
		}
		require.Less(t, j, len(lines), "README block after %q is not closed", marker)
		return strings.Join(body, "\n") + "\n"
	}
	t.Fatalf("README has no block after %q", marker)
	return ""
}
