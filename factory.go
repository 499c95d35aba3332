// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

// Package llmsloprocessor is an OpenTelemetry Collector traces processor,
// type "llm_slo", that recognizes LLM request spans, derives their TTFT,
// TPOT, ITL, E2E and queue time, judges them against configured SLOs and
// writes the results onto the span. See docs/processor.md for the
// attribute contract and the formulas.
package llmsloprocessor

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"

	"github.com/llmslo/llmslo/internal/metadata"
	"github.com/llmslo/llmslo/internal/registry"
)

// NewFactory returns the factory of the llm_slo processor.
func NewFactory() processor.Factory {
	return processor.NewFactory(
		metadata.Type,
		createDefaultConfig,
		processor.WithTraces(createTraces, metadata.TracesStability),
	)
}

// createTraces builds the processor and registers it for the connectors of
// the same collector (its prefix and SLO names); Shutdown unregisters it.
func createTraces(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Traces) (processor.Traces, error) {
	c := cfg.(*Config)
	p, err := newProcessor(set, c, next)
	if err != nil {
		return nil, err
	}
	p.unregister, err = registry.RegisterUnique(registry.Processor{ID: set.ID.String(), Prefix: c.AttributePrefix,
		SLOs: c.sloNames(), Definitions: c.sloDefinitions(), ExcludeUnknown: c.excludingUnknown(), Thresholds: c.sloThresholds()})
	if err != nil {
		return nil, err
	}
	t, err := newTracesFromImpl(ctx, set, cfg, next, p)
	if err != nil {
		p.unregister()
		return nil, err
	}
	return t, nil
}

func newTracesFromImpl(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Traces, p *llmSLOProcessor) (processor.Traces, error) {
	if p.asm != nil {
		next = p.asm.Settling(next)
	}
	return processorhelper.NewTraces(ctx, set, cfg, next, p.processTraces,
		processorhelper.WithCapabilities(consumer.Capabilities{MutatesData: true}),
		processorhelper.WithStart(p.start),
		processorhelper.WithShutdown(p.shutdown))
}
