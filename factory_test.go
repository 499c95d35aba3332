// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloprocessor

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/llmslo/llmslo/internal/metadata"
)

func TestFactory(t *testing.T) {
	f := NewFactory()
	assert.Equal(t, metadata.Type, f.Type())
	assert.Equal(t, component.StabilityLevelAlpha, f.TracesStability())
	assert.NoError(t, componenttest.CheckConfigStruct(f.CreateDefaultConfig()))
}

func TestLifecycle(t *testing.T) {
	cfg, err := loadConfig(t, "golden")
	require.NoError(t, err)
	processortest.VerifyShutdown(t, NewFactory(), cfg)

	// Shutdown is safe without Start, and the processor declares that it
	// mutates data so the pipeline hands it its own copy.
	p, err := NewFactory().CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, consumertest.NewNop())
	require.NoError(t, err)
	assert.Equal(t, consumer.Capabilities{MutatesData: true}, p.Capabilities())
	require.NoError(t, p.Shutdown(context.Background()))
}

type ctxKey struct{}

// TestPassesContext: the processor hands the caller's context downstream.
func TestPassesContext(t *testing.T) {
	var got context.Context
	next, err := consumer.NewTraces(func(ctx context.Context, _ ptrace.Traces) error { got = ctx; return nil })
	require.NoError(t, err)
	cfg := createDefaultConfig()
	p, err := NewFactory().CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, next)
	require.NoError(t, err)
	ctx := context.WithValue(context.Background(), ctxKey{}, 1)
	require.NoError(t, p.ConsumeTraces(ctx, ptrace.NewTraces()))
	assert.Same(t, ctx, got)
}

// TestTelemetry checks the processor's own metrics on the hostile and vLLM
// samples: spans by preset and origin, errors by field and reason, verdicts.
func TestTelemetry(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	set := processortest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	cfg, err := loadConfig(t, "golden")
	require.NoError(t, err)
	for _, dir := range []string{"vllm", "hostile"} {
		td, err := golden.ReadTraces(filepath.Join("testdata", "traces", dir, "input.yaml"))
		require.NoError(t, err)
		processWith(t, cfg, set, td)
	}

	sums := func(name string) map[attribute.Distinct]int64 {
		m, err := tel.GetMetric(name)
		require.NoError(t, err)
		out := map[attribute.Distinct]int64{}
		for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
			out[dp.Attributes.Equivalent()] = dp.Value
		}
		return out
	}
	set2 := func(kv ...string) attribute.Distinct {
		var attrs []attribute.KeyValue
		for i := 0; i < len(kv); i += 2 {
			attrs = append(attrs, attribute.String(kv[i], kv[i+1]))
		}
		set := attribute.NewSet(attrs...)
		return set.Equivalent()
	}

	requests := sums("otelcol_processor_llm_slo_requests")
	assert.Equal(t, int64(3+6), requests[set2("origin", "attributes", "preset", "vllm")])
	assert.Equal(t, int64(2), requests[set2("origin", "span", "preset", "semconv")])
	assert.Equal(t, int64(1), requests[set2("origin", "span", "preset", "openllmetry")])
	assert.Equal(t, int64(2), requests[set2("origin", "events", "preset", "openllmetry")])

	errs := sums("otelcol_processor_llm_slo_errors")
	assert.Equal(t, int64(2), errs[set2("field", "ttft", "reason", "invalid_value")])
	assert.Equal(t, int64(1), errs[set2("field", "events", "reason", "outside_span")])
	assert.Equal(t, int64(1), errs[set2("field", "span", "reason", "end_before_start")])
	assert.Equal(t, int64(1), errs[set2("field", "tpot", "reason", "inconsistent")])

	verdicts := sums("otelcol_processor_llm_slo_verdicts")
	// vllm: interactive met, met, violated (ttft 0.65 s); hostile: two
	// decided spans violate it (ttft 0.6 s; tpot 35 ms); the one whose
	// usage says 0 output tokens on a stream of three chunks is unknown
	// (output_tokens:implausible: its N = 0 made TPOT not applicable, and
	// the verdict met), as are the other eight.
	assert.Equal(t, int64(1), errs[set2("field", "output_tokens", "reason", "implausible")])
	assert.Equal(t, int64(2), verdicts[set2("outcome", "met", "slo", "interactive")])
	assert.Equal(t, int64(3), verdicts[set2("outcome", "violated", "slo", "interactive")])
	assert.Equal(t, int64(9), verdicts[set2("outcome", "unknown", "slo", "interactive")])
}

// TestNonLLMSpansAllocateNothing: spans no preset claims cost no allocation
// in the processor itself.
func TestNonLLMSpansAllocateNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	td, err := golden.ReadTraces(filepath.Join("testdata", "traces", "non_llm", "input.yaml"))
	require.NoError(t, err)
	p, err := newProcessor(processortest.NewNopSettings(metadata.Type), createDefaultConfig().(*Config), consumertest.NewNop())
	require.NoError(t, err)
	ctx := context.Background()
	_, _ = p.processTraces(ctx, td)
	assert.Zero(t, testing.AllocsPerRun(200, func() { _, _ = p.processTraces(ctx, td) }))
}
