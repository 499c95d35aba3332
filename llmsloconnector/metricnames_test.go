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
)

// TestExportedMetrics: every exported metric is emitted, by that name, unit
// and type, as the golden outputs show (the histograms' names are
// histNames by construction).
func TestExportedMetrics(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "traces", "*", "output.yaml"))
	require.NoError(t, err)
	emitted := map[string]Metric{}
	for _, f := range files {
		md, err := golden.ReadMetrics(f)
		require.NoError(t, err)
		collect(t, md, emitted)
	}
	want := []Metric{MetricSLORequests, MetricSLOMet, MetricSLOViolated, MetricSLOUnknown, MetricSLOTokensMet, MetricSLOViolations, MetricSLOGoodput}
	for _, layer := range Layers {
		for l := range Latency(len(latencyKinds)) {
			m, ok := LatencyHistogram(l, layer)
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
	_, ok := LatencyHistogram(LatencyTTFT, "edge")
	assert.False(t, ok)
}

func collect(t *testing.T, md pmetric.Metrics, emitted map[string]Metric) {
	for _, rm := range md.ResourceMetrics().All() {
		for _, sm := range rm.ScopeMetrics().All() {
			for _, m := range sm.Metrics().All() {
				typ := map[pmetric.MetricType]MetricType{
					pmetric.MetricTypeSum: MetricTypeCounter, pmetric.MetricTypeGauge: MetricTypeGauge,
					pmetric.MetricTypeExponentialHistogram: MetricTypeHistogram, pmetric.MetricTypeHistogram: MetricTypeHistogram,
				}[m.Type()]
				if m.Type() == pmetric.MetricTypeSum {
					require.True(t, m.Sum().IsMonotonic(), m.Name())
				}
				emitted[m.Name()] = Metric{m.Name(), m.Unit(), typ}
			}
		}
	}
}
