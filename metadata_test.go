// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloprocessor

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap/confmaptest"
)

// TestMetadataMatchesTelemetry: metadata.yaml (written by hand in
// mdatagen's shape) lists exactly the instruments telemetry.go registers,
// with the same units and descriptions, and documentation.md names each.
func TestMetadataMatchesTelemetry(t *testing.T) {
	cm, err := confmaptest.LoadConf("metadata.yaml")
	require.NoError(t, err)
	assert.Equal(t, "llm_slo", cm.Get("type"))
	metrics, err := cm.Sub("telemetry::metrics")
	require.NoError(t, err)
	doc, err := readFile("documentation.md")
	require.NoError(t, err)
	var names []string
	for _, in := range instruments {
		key := strings.TrimPrefix(in.name, "otelcol_")
		names = append(names, key)
		assert.Equal(t, in.unit, metrics.Get(key+"::unit"), key)
		assert.Equal(t, in.description, metrics.Get(key+"::description"), key)
		assert.Contains(t, doc, "### "+in.name+"\n\n"+in.description+"\n")
	}
	assert.ElementsMatch(t, names, keysOf(metrics.ToStringMap()))
}

func keysOf(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func readFile(name string) (string, error) {
	b, err := os.ReadFile(name)
	return string(b), err
}
