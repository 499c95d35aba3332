// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
	"path/filepath"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/llmslo/llmslo/internal/catalog"
)

// TestExportedMetrics: every metric of the catalogue is emitted, by that
// name, unit and type, as the golden outputs show (the histograms' names
// are histNames by construction).
func TestExportedMetrics(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "traces", "*", "output.yaml"))
	require.NoError(t, err)
	emitted := map[string]catalog.Metric{}
	for _, f := range files {
		md, err := golden.ReadMetrics(f)
		require.NoError(t, err)
		collect(t, md, emitted)
	}
	want := []catalog.Metric{catalog.SLORequests, catalog.SLOMet, catalog.SLOViolated, catalog.SLOUnknown, catalog.SLOTokensMet, catalog.SLOViolations, catalog.SLOGoodput,
		catalog.SLOWeighted, catalog.SLOWeightedSpans}
	for _, layer := range catalog.Layers {
		for l := range catalog.NumLatencies {
			m, ok := catalog.LatencyHistogram(l, layer)
			require.True(t, ok)
			want = append(want, m)
		}
	}
	// The golden spans have no server-side ITL; every other metric is there.
	for _, m := range want {
		if got, ok := emitted[m.Name]; ok || m.Name != histNames[histITL][layerServer] {
			assert.Equal(t, m, got, m.Name)
		}
	}
	_, ok := catalog.LatencyHistogram(catalog.LatencyTTFT, "edge")
	assert.False(t, ok)
}

func collect(t *testing.T, md pmetric.Metrics, emitted map[string]catalog.Metric) {
	for _, rm := range md.ResourceMetrics().All() {
		for _, sm := range rm.ScopeMetrics().All() {
			for _, m := range sm.Metrics().All() {
				typ := map[pmetric.MetricType]catalog.Type{
					pmetric.MetricTypeSum: catalog.Counter, pmetric.MetricTypeGauge: catalog.Gauge,
					pmetric.MetricTypeExponentialHistogram: catalog.Histogram, pmetric.MetricTypeHistogram: catalog.Histogram,
				}[m.Type()]
				if m.Type() == pmetric.MetricTypeSum {
					require.True(t, m.Sum().IsMonotonic(), m.Name())
				}
				emitted[m.Name()] = catalog.Metric{Name: m.Name(), Unit: m.Unit(), Type: typ}
			}
		}
	}
}
