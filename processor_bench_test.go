// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloprocessor

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/llmslo/llmslo/internal/benchspans"
	"github.com/llmslo/llmslo/internal/metadata"
)

// benchBatch is n spans of the bench module's shapes: a vLLM engine span
// (events < 0) or an OpenLLMetry client span with that many chunk events.
func benchBatch(n, events int) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "bench")
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	for i := range n {
		model := fmt.Sprintf("model-%d", i%3)
		if events < 0 {
			benchspans.Engine(spans.AppendEmpty(), "cmpl", model)
		} else {
			benchspans.Client(spans.AppendEmpty(), model, events)
		}
	}
	return td
}

// BenchmarkProcessSpans times the processor alone: each batch is copied
// outside the timer (the processor mutates it). The bench module compares
// the processor with its floor; this one isolates the processor's own
// changes from the copy's noise. Two SLO sets: one bounding TTFT, TPOT and
// E2E (the parts are written, for the causes of its misses) and one
// bounding TPOT alone (no SLO reads a part, so none is written).
func BenchmarkProcessSpans(b *testing.B) {
	ttft, tpot, e2e := 500*time.Millisecond, 15*time.Millisecond, 2*time.Second
	for _, slos := range []struct {
		name string
		slos []SLOConfig
	}{
		{"slo_ttft_tpot_e2e", []SLOConfig{{Name: "interactive", TTFT: &ttft, TPOT: &tpot, E2E: &e2e}}},
		{"slo_tpot", []SLOConfig{{Name: "smooth", TPOT: &tpot}}},
	} {
		cfg := createDefaultConfig().(*Config)
		cfg.SLOs = slos.slos
		p, err := NewFactory().CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, consumertest.NewNop())
		require.NoError(b, err)
		b.Run(slos.name, func(b *testing.B) { benchShapes(b, p) })
	}
}

// BenchmarkCopyFloor is BenchmarkProcessSpans without the processor: the
// batch copy alone, which an instruction count (that no timer stops)
// subtracts from the processor's arms.
func BenchmarkCopyFloor(b *testing.B) { benchShapes(b, nil) }

func benchShapes(b *testing.B, p processor.Traces) {
	for _, s := range []struct {
		name          string
		spans, events int
	}{{"vllm_attributes", 1000, -1}, {"chunks_16", 1000, 16}, {"chunks_256", 100, 256}} {
		src := benchBatch(s.spans, s.events)
		b.Run(s.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				td := ptrace.NewTraces()
				src.CopyTo(td)
				b.StartTimer()
				if p == nil {
					continue
				}
				if err := p.ConsumeTraces(context.Background(), td); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*s.spans), "ns/span")
		})
	}
}
