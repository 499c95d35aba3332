// Package llmsloprocessor is an OpenTelemetry Collector traces processor,
// type "llm_slo", that recognises LLM request spans, derives their TTFT,
// TPOT, ITL, E2E and queue time, judges them against configured SLOs and
// writes the results onto the span. See the README for the attribute
// contract and the formulas.
package llmsloprocessor

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"

	"github.com/llmslo/llmslo/internal/metadata"
)

// NewFactory returns the factory of the llm_slo processor.
func NewFactory() processor.Factory {
	return processor.NewFactory(
		metadata.Type,
		createDefaultConfig,
		processor.WithTraces(createTraces, metadata.TracesStability),
	)
}

func createTraces(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Traces) (processor.Traces, error) {
	p, err := newProcessor(set, cfg.(*Config), next)
	if err != nil {
		return nil, err
	}
	return newTracesFromImpl(ctx, set, cfg, next, p)
}

func newTracesFromImpl(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Traces, p *llmSLOProcessor) (processor.Traces, error) {
	return processorhelper.NewTraces(ctx, set, cfg, next, p.processTraces,
		processorhelper.WithCapabilities(consumer.Capabilities{MutatesData: true}),
		processorhelper.WithStart(p.start),
		processorhelper.WithShutdown(p.shutdown))
}
