// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// decode is the receiver's work on a request body: the OTLP protobuf
// decoding that dominates a pass-through collector's CPU.
func decode(tb testing.TB, body []byte) ptrace.Traces {
	req := ptraceotlp.NewExportRequest()
	if err := req.UnmarshalProto(body); err != nil {
		tb.Fatal(err)
	}
	return req.Traces()
}

// mixWrites lists, per span of a load-mix body, the attributes the
// processor adds to it, and keys enough for the longest list: what the bare
// pass writes on the mix.
func mixWrites(tb testing.TB, body []byte) (writes [][]pcommon.Value, keys []string) {
	before, after := decode(tb, body), decode(tb, body)
	require.NoError(tb, newProcessor(tb).ConsumeTraces(context.Background(), after))
	spans := func(td ptrace.Traces) []ptrace.Span {
		var out []ptrace.Span
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, sp := range ss.Spans().All() {
					out = append(out, sp)
				}
			}
		}
		return out
	}
	b, a := spans(before), spans(after)
	require.Len(tb, a, len(b))
	for i := range b {
		var added []pcommon.Value
		for k, v := range a[i].Attributes().All() {
			if _, ok := b[i].Attributes().Get(k); !ok {
				added = append(added, v)
			}
		}
		writes = append(writes, added)
		for len(keys) < len(added) {
			keys = append(keys, fmt.Sprintf("llm.bench.%d", len(keys)))
		}
	}
	return writes, keys
}

// BenchmarkPipeline runs the load test's span mix in-process from the bytes
// the receiver gets: decoding alone, decoding and the bare pass (the floor
// of reading the processor's inputs and writing its attributes), decoding
// and the processor, and decoding, processor and connector. Over decoding
// alone, the arms show what the pair adds to a pass-through collector's
// largest cost, and how much of it is the floor.
func BenchmarkPipeline(b *testing.B) {
	ctx := context.Background()
	bodies := loadMix(b, 20)
	writes, keys := mixWrites(b, bodies[0])
	p, c := newProcessor(b), llmConnector(b)
	arms := []struct {
		name  string
		after func(ptrace.Traces) error
	}{
		{"decode", func(ptrace.Traces) error { return nil }},
		{"decode+bare_pass", func(td ptrace.Traces) error { barePass(td, writes, keys); return nil }},
		{"decode+processor", func(td ptrace.Traces) error { return p.ConsumeTraces(ctx, td) }},
		{"decode+processor+connector", func(td ptrace.Traces) error {
			if err := p.ConsumeTraces(ctx, td); err != nil {
				return err
			}
			return c.ConsumeTraces(ctx, td)
		}},
	}
	for _, arm := range arms {
		b.Run("mix/"+arm.name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if err := arm.after(decode(b, bodies[i%len(bodies)])); err != nil {
					b.Fatal(err)
				}
				i++
			}
			perSpan(b, 100)
		})
	}
}
