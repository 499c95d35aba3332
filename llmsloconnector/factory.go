// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

// Package llmsloconnector is an OpenTelemetry Collector traces-to-metrics
// connector, type "llm_slo", that turns the llm_slo processor's span
// attributes into latency histograms, SLO goodput counters and windowed
// percentile gauges. See the README for the metrics it emits.
package llmsloconnector

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"

	"github.com/llmslo/llmslo/internal/metadata"
)

// NewFactory returns the factory of the llm_slo connector.
func NewFactory() connector.Factory {
	return connector.NewFactory(
		metadata.Type,
		createDefaultConfig,
		connector.WithTracesToMetrics(createTracesToMetrics, metadata.TracesToMetricsStability),
	)
}

func createTracesToMetrics(_ context.Context, set connector.Settings, cfg component.Config, next consumer.Metrics) (connector.Traces, error) {
	return newConnector(set.TelemetrySettings, cfg.(*Config), next)
}
