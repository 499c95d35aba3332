// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"

	"github.com/llmslo/llmslo/internal/metadata"
)

// TestLifecycleSequences drives the connector through the sequences the
// collector's own lifecycle tests use, in every mode (each golden case's
// configuration): Shutdown must be safe after Start, a second time, and
// without Start; pending data is flushed once.
func TestLifecycleSequences(t *testing.T) {
	type step func(t *testing.T, c connector.Traces)
	start := func(t *testing.T, c connector.Traces) {
		require.NoError(t, c.Start(context.Background(), componenttest.NewNopHost()))
	}
	consume := func(t *testing.T, c connector.Traces) {
		require.NoError(t, c.ConsumeTraces(context.Background(), readInput(t)))
	}
	shutdown := func(t *testing.T, c connector.Traces) {
		require.NoError(t, c.Shutdown(context.Background()))
	}
	sequences := []struct {
		name    string
		steps   []step
		flushes int
	}{
		{"shutdown without start", []step{shutdown}, 0},
		{"shutdown twice without start", []step{shutdown, shutdown}, 0},
		{"start, shutdown", []step{start, shutdown}, 0},
		{"start, consume, shutdown, shutdown", []step{start, consume, shutdown, shutdown}, 1},
		{"consume, shutdown without start", []step{consume, shutdown}, 0},
	}
	for _, mode := range []string{"exponential", "explicit", "delta", "cardinality_limit", "dimensions"} {
		for _, seq := range sequences {
			t.Run(mode+"/"+seq.name, func(t *testing.T) {
				sink := new(consumertest.MetricsSink)
				c, err := NewFactory().CreateTracesToMetrics(context.Background(),
					connectortest.NewNopSettings(metadata.Type), caseConfig(t, mode), sink)
				require.NoError(t, err)
				for _, s := range seq.steps {
					s(t, c)
				}
				assert.Len(t, sink.AllMetrics(), seq.flushes)
			})
		}
	}
}
