// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloprocessor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/llmslo/llmslo/internal/metadata"
	"github.com/llmslo/llmslo/internal/registry"
)

// lifecycleModes are the configurations whose lifecycle differs: stateless
// (with and without SLOs, token-aware) and trace assembly (a ticker
// goroutine and held spans).
var lifecycleModes = []string{"", "golden", "token_aware", "assembly", "full"}

// capturingConsumer records the context it was called with.
type capturingConsumer struct{ ctx context.Context }

func (*capturingConsumer) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: true}
}

func (c *capturingConsumer) ConsumeTraces(ctx context.Context, _ ptrace.Traces) error {
	c.ctx = ctx
	return nil
}

type lifecycleKey struct{}

// TestComponentLifecycle follows the collector's generated lifecycle tests
// in every mode: shutdown without start; start, one batch, shutdown twice;
// and processortest.VerifyShutdown.
func TestComponentLifecycle(t *testing.T) {
	for _, mode := range lifecycleModes {
		cfg, err := loadConfig(t, mode)
		require.NoError(t, err)
		name := mode
		if name == "" {
			name = "default"
		}
		t.Run(name+"-shutdown", func(t *testing.T) {
			p, err := NewFactory().CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, &capturingConsumer{})
			require.NoError(t, err)
			require.NoError(t, p.Shutdown(context.Background()))
			require.NoError(t, p.Shutdown(context.Background()))
		})
		t.Run(name+"-lifecycle", func(t *testing.T) {
			next := &capturingConsumer{}
			p, err := NewFactory().CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, next)
			require.NoError(t, err)
			require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
			ctx := context.WithValue(context.Background(), lifecycleKey{}, "v")
			require.NoError(t, p.ConsumeTraces(ctx, lifecycleTraces()))
			require.Same(t, ctx, next.ctx)
			require.NoError(t, p.Shutdown(context.Background()))
			require.NoError(t, p.Shutdown(context.Background()))
		})
		t.Run(name+"-verify-shutdown", func(t *testing.T) {
			processortest.VerifyShutdown(t, NewFactory(), cfg)
		})
	}
}

// TestRegistersUntilShutdown: the factory registers the processor's prefix,
// SLO names and thresholds for the connectors; Shutdown (twice)
// unregisters it.
func TestRegistersUntilShutdown(t *testing.T) {
	cfg, err := loadConfig(t, "full")
	require.NoError(t, err)
	set := processortest.NewNopSettings(metadata.Type)
	set.ID = component.MustNewIDWithName("llm_slo", "edge")
	p, err := NewFactory().CreateTraces(context.Background(), set, cfg, &capturingConsumer{})
	require.NoError(t, err)
	want := registry.Processor{ID: "llm_slo/edge", Prefix: "llmslo.", SLOs: []string{"interactive"},
		Thresholds: []map[string]time.Duration{{"ttft": 500 * time.Millisecond, "tpot": 15 * time.Millisecond,
			"itl": 100 * time.Millisecond, "e2e": 2 * time.Second, "queue_time": 100 * time.Millisecond}}}
	assert.Contains(t, registry.Processors(), want)
	require.NoError(t, p.Shutdown(context.Background()))
	require.NoError(t, p.Shutdown(context.Background()))
	assert.NotContains(t, registry.Processors(), want)
}

func lifecycleTraces() ptrace.Traces {
	td := ptrace.NewTraces()
	span := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	span.SetName("llm_request")
	span.SetTraceID(pcommon.TraceID{1})
	now := time.Now()
	span.SetStartTimestamp(pcommon.NewTimestampFromTime(now.Add(-time.Second)))
	span.SetEndTimestamp(pcommon.NewTimestampFromTime(now))
	span.Attributes().PutDouble("gen_ai.latency.time_to_first_token", 0.1)
	return td
}

// TestSameSLONameTwice: two llm_slo processors of one collector may share an
// SLO only with one definition; a second, different one is refused at
// creation, naming the SLO and both processors.
func TestSameSLONameTwice(t *testing.T) {
	create := func(name string, ttft time.Duration) (processor.Traces, error) {
		cfg := createDefaultConfig().(*Config)
		cfg.SLOs = []SLOConfig{{Name: "interactive", TTFT: &ttft}}
		set := processortest.NewNopSettings(metadata.Type)
		set.ID = component.MustNewIDWithName("llm_slo", name)
		return NewFactory().CreateTraces(context.Background(), set, cfg, &capturingConsumer{})
	}
	a, err := create("a", 500*time.Millisecond)
	require.NoError(t, err)
	defer func() { require.NoError(t, a.Shutdown(context.Background())) }()
	same, err := create("same", 500*time.Millisecond)
	require.NoError(t, err, "the same definition twice is one SLO")
	require.NoError(t, same.Shutdown(context.Background()))
	_, err = create("b", time.Second)
	require.EqualError(t, err, `SLO "interactive" is defined differently by llm_slo/a and llm_slo/b: their verdicts would merge into one series (the metrics tell SLOs apart by name only); give one of them another name, or the same definition`)
}
