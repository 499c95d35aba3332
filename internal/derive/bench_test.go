// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package derive

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmslo/llmslo/internal/benchspans"
	"github.com/llmslo/llmslo/internal/contract"
	"github.com/llmslo/llmslo/internal/preset"
)

// span builds one span with a benchspans function.
func span(build func(ptrace.Span)) ptrace.Span {
	s := ptrace.NewSpan()
	build(s)
	return s
}

// BenchmarkDerive measures the derivation alone (it does not write to the
// span, so no copy is needed), on the processor benchmark's shapes.
func BenchmarkDerive(b *testing.B) {
	keys := contract.NewKeys("llm.")
	table := NewTable(preset.Builtin(), Options{OwnedPrefix: keys.Prefix, Owned: keys.Owns})
	for _, c := range []struct {
		name string
		span ptrace.Span
	}{
		{"vllm_attributes", span(func(s ptrace.Span) { benchspans.Engine(s, "cmpl-1", "model-1") })},
		{"chunks_16", span(func(s ptrace.Span) { benchspans.Client(s, "model-1", 16) })},
		{"chunks_256", span(func(s ptrace.Span) { benchspans.Client(s, "model-1", 256) })},
		// a non-streamed semconv span, which every preset before
		// semconv's is asked about
		{"semconv_client", span(benchspans.SemconvClient)},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var res Result
			for b.Loop() {
				if !table.Derive(c.span, &res) {
					b.Fatal("span not recognized")
				}
			}
		})
	}
}
