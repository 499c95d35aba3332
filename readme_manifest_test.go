// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloprocessor

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
)

// componentModules are the modules of the component types the README's
// configurations use, as the collector release they are built against
// registers them.
var componentModules = map[string]string{
	"receivers/otlp":            "go.opentelemetry.io/collector/receiver/otlpreceiver",
	"processors/llm_slo":        "github.com/llmslo/llmslo",
	"processors/batch":          "go.opentelemetry.io/collector/processor/batchprocessor",
	"processors/memory_limiter": "go.opentelemetry.io/collector/processor/memorylimiterprocessor",
	"connectors/llm_slo":        "github.com/llmslo/llmslo",
	"exporters/debug":           "go.opentelemetry.io/collector/exporter/debugexporter",
	"exporters/otlp_grpc":       "go.opentelemetry.io/collector/exporter/otlpexporter",
	"exporters/otlp_http":       "go.opentelemetry.io/collector/exporter/otlphttpexporter",
	"exporters/prometheus":      "github.com/open-telemetry/opentelemetry-collector-contrib/exporter/prometheusexporter",
	"extensions/health_check":   "github.com/open-telemetry/opentelemetry-collector-contrib/extension/healthcheckextension",
}

// TestReadmeManifestHasTheConfigsComponents: the README's own-distribution
// manifest has a module for every component of the README's
// production-shaped configuration, so the distribution it builds runs that
// configuration (it lacked memory_limiter, otlp_grpc and health_check).
// The end-to-end TestInstallFromReadme builds the manifest and validates the
// configuration with it.
func TestReadmeManifestHasTheConfigsComponents(t *testing.T) {
	b, err := os.ReadFile("README.md")
	require.NoError(t, err)
	readme := string(b)
	manifest := loadBlock(t, readmeYAML(t, readme, "<!-- install manifest"))
	config := loadBlock(t, readmeYAML(t, readme, "<!-- production config"))

	inManifest := map[string]bool{}
	for _, kind := range []string{"receivers", "processors", "connectors", "exporters", "extensions"} {
		list, _ := manifest.Get(kind).([]any)
		for _, c := range list {
			gomod, _ := c.(map[string]any)["gomod"].(string)
			module, _, _ := strings.Cut(gomod, " ")
			inManifest[kind+"/"+module] = true
		}
	}
	var used, missing []string
	for _, kind := range []string{"receivers", "processors", "connectors", "exporters", "extensions"} {
		sub, err := config.Sub(kind)
		require.NoError(t, err)
		for id := range sub.ToStringMap() {
			typ, _, _ := strings.Cut(id, "/")
			key := kind + "/" + typ
			used = append(used, key)
			module, ok := componentModules[key]
			require.True(t, ok, "the README's configuration uses %s: add its module to componentModules", key)
			if !inManifest[kind+"/"+module] {
				missing = append(missing, key+" ("+module+")")
			}
		}
	}
	sort.Strings(used)
	assert.Equal(t, []string{"connectors/llm_slo", "exporters/debug", "exporters/otlp_grpc", "exporters/prometheus", "extensions/health_check",
		"processors/batch", "processors/llm_slo", "processors/memory_limiter", "receivers/otlp"}, slices.Compact(used))
	assert.Empty(t, missing, "components of the README's configuration the README's manifest does not build")
}

// readmeYAML is the YAML block after the line starting with marker.
func readmeYAML(t *testing.T, readme, marker string) string {
	t.Helper()
	_, rest, ok := strings.Cut(readme, "\n"+marker)
	require.True(t, ok, "README has no %q", marker)
	_, rest, ok = strings.Cut(rest, "```yaml\n")
	require.True(t, ok)
	body, _, ok := strings.Cut(rest, "\n```")
	require.True(t, ok)
	return body
}

func loadBlock(t *testing.T, body string) *confmap.Conf {
	t.Helper()
	path := filepath.Join(t.TempDir(), "block.yaml")
	require.NoError(t, os.WriteFile(path, []byte(body), 0o600))
	cm, err := confmaptest.LoadConf(path)
	require.NoError(t, err)
	return cm
}
