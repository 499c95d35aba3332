// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package assembly

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmslo/llmslo/internal/derive"
	"github.com/llmslo/llmslo/internal/preset"
)

// TestSpan: what Span decides for one request span, after an engine span
// of the same trace (or none) and with the bounds as given.
func TestSpan(t *testing.T) {
	known := func(v float64) derive.Value { return derive.Value{V: v, S: derive.Known} }
	engine := &derive.Result{Layer: preset.LayerServer, TTFT: known(0.15), QueueTime: known(0.04)}
	sglang := func(tokens int64, assembled bool) *derive.Result {
		return &derive.Result{Layer: preset.LayerServer, OutputTokens: tokens, HasOutputTokens: true, Assembled: assembled}
	}
	tests := []struct {
		name     string
		maxHeld  int
		before   *derive.Result // an engine span of the trace (vllm), first
		preset   string
		res      *derive.Result
		want     Decision
		overflow bool // itl:overflow marked on the result
	}{
		{name: "client, no engine span", preset: "semconv", res: &derive.Result{Layer: preset.LayerClient}},
		{name: "client after an engine span: joined", before: engine, preset: "semconv",
			res: &derive.Result{Layer: preset.LayerClient}, want: Decision{Server: &ServerView{TTFT: known(0.15), QueueTime: known(0.04)}}},
		{name: "client after an engine span that knew neither value", before: &derive.Result{Layer: preset.LayerServer},
			preset: "semconv", res: &derive.Result{Layer: preset.LayerClient}},
		{name: "engine span without steps", preset: "vllm", res: engine},
		{name: "steps all there: derived from them", preset: "sglang", res: sglang(5, true)},
		{name: "one token: no decode steps to wait for", preset: "sglang", res: sglang(1, false)},
		{name: "steps missing: held", preset: "sglang", res: sglang(5, false), want: Decision{Held: true}},
		{name: "steps missing, max_held reached: overflow", maxHeld: -1, preset: "sglang", res: sglang(5, false), overflow: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, func(c *Config) {
				if tt.maxHeld < 0 {
					c.MaxHeld = 0
				}
			}, consumertest.NewNop())
			p, ok := preset.ByName(tt.preset)
			require.True(t, ok)
			td := ptrace.NewTraces()
			rs := td.ResourceSpans().AppendEmpty()
			ss := rs.ScopeSpans().AppendEmpty()
			span := ss.Spans().AppendEmpty()
			span.SetTraceID(pcommon.TraceID{7})
			b := r.a.Begin(td)
			if tt.before != nil {
				vllm, _ := preset.ByName("vllm")
				require.Equal(t, Decision{}, r.a.Span(b, Request{Span: span, Resource: rs, Scope: ss, Result: tt.before, Preset: vllm}))
			}
			got := r.a.Span(b, Request{Span: span, Resource: rs, Scope: ss, Result: tt.res, Preset: p})
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.overflow, tt.res.Errors[derive.FieldITL] == derive.Overflow)
			r.a.End(context.Background(), b, td)
			r.check()
		})
	}
}

// TestToSteps: steps come out sorted by time, each with the tokens its
// counter rose by (-1 where a counter is missing or does not rise), and
// complete a request by their number or by the counter.
func TestToSteps(t *testing.T) {
	tests := []struct {
		name       string
		steps      []step
		wantTimes  []uint64
		wantCounts []int64
		covers     map[int64]bool // expected steps -> complete
	}{
		{name: "none", steps: nil, wantTimes: []uint64{}, wantCounts: []int64{}, covers: map[int64]bool{0: false, 1: false}},
		{name: "in order, no counter", steps: []step{{10, -1}, {20, -1}}, wantTimes: []uint64{10, 20},
			wantCounts: []int64{-1, -1}, covers: map[int64]bool{0: true, 2: true, 3: false}},
		{name: "out of order, speculative counter", steps: []step{{30, 6}, {10, 2}, {20, 4}}, wantTimes: []uint64{10, 20, 30},
			wantCounts: []int64{-1, 2, 2}, covers: map[int64]bool{3: true, 6: true, 7: false}},
		{name: "counter missing or falling", steps: []step{{10, 3}, {20, -1}, {30, 5}, {40, 4}}, wantTimes: []uint64{10, 20, 30, 40},
			wantCounts: []int64{-1, -1, -1, -1}, covers: map[int64]bool{4: true, 5: true, 6: false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &traceEntry{}
			for _, s := range tt.steps {
				e.steps = append(e.steps, s)
				e.maxCounter = max(e.maxCounter, s.counter)
			}
			for expected, want := range tt.covers {
				assert.Equal(t, want, e.covers(expected), "covers(%d)", expected)
			}
			got := e.toSteps()
			assert.Equal(t, tt.wantTimes, got.Times)
			assert.Equal(t, tt.wantCounts, got.Counts)
		})
	}
}
