// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

// Package metadata holds the component type and stability levels shared by
// the llm_slo processor and connector, in the layout mdatagen generates (the
// mdatagen release matching the pinned collector is not available to this
// project, so it is written by hand).
package metadata

import "go.opentelemetry.io/collector/component"

var (
	// Type is the component type of both the processor and the connector:
	// processor and connector IDs live in separate namespaces.
	Type = component.MustNewType("llm_slo")
	// ProcessorScopeName and ConnectorScopeName name the instrumentation
	// scopes of each component's own telemetry.
	ProcessorScopeName = "github.com/llmslo/llmslo"
	ConnectorScopeName = "github.com/llmslo/llmslo/llmsloconnector"
)

const (
	TracesStability          = component.StabilityLevelAlpha
	TracesToMetricsStability = component.StabilityLevelAlpha
)
