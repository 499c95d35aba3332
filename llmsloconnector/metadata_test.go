// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/llmslo/llmslo/internal/metadata"
)

// TestMetadataMatchesCode: metadata.yaml and documentation.md name the
// connector's own telemetry exactly as the code creates it.
func TestMetadataMatchesCode(t *testing.T) {
	cm, err := confmaptest.LoadConf("metadata.yaml")
	require.NoError(t, err)
	assert.Equal(t, metadata.Type.String(), cm.Get("type"))
	doc, err := os.ReadFile("documentation.md")
	require.NoError(t, err)
	defs := []metricDef{telemetryDefs.skipped, telemetryDefs.rejected, telemetryDefs.overflow,
		telemetryDefs.verdictsIgnored, telemetryDefs.labelsRepaired, telemetryDefs.labelsTruncated, telemetryDefs.tracestate}
	metrics, err := cm.Sub("telemetry::metrics")
	require.NoError(t, err)
	assert.Len(t, metrics.ToStringMap(), len(defs))
	for _, def := range defs {
		key := strings.TrimPrefix(def.name, "otelcol_")
		m, err := metrics.Sub(key)
		require.NoError(t, err)
		assert.Equal(t, def.desc, m.Get("description"), key)
		assert.Equal(t, def.unit, m.Get("unit"), key)
		assert.Contains(t, string(doc), "### "+def.name+"\n\n"+def.desc+"\n", key)
	}
}
