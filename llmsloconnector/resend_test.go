// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/pmetrictest"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"

	"github.com/llmslo/llmslo/internal/contract"
)

// TestConnectorSkipsResends: the processor's re-sends of held spans
// (contract.WithResent) reach the connector beside the exporter that
// refused them; counted at their first send, they add nothing: the
// output equals the golden one of a single send.
func TestConnectorSkipsResends(t *testing.T) {
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, caseConfig(t, "exponential"), sink)
	require.NoError(t, c.ConsumeTraces(context.Background(), readInput(t)))
	for range 5 {
		require.NoError(t, c.ConsumeTraces(contract.WithResent(context.Background()), readInput(t)))
	}
	c.flush(context.Background())
	require.Len(t, sink.AllMetrics(), 1)
	want, err := golden.ReadMetrics(filepath.Join("testdata", "traces", "exponential", "output.yaml"))
	require.NoError(t, err)
	require.NoError(t, pmetrictest.CompareMetrics(want, sink.AllMetrics()[0], compareOptions...))
}
