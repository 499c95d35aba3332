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
// counter rose by or it states (-1 where unknown), and complete a request
// only when every step it needs is there: each counter 1..expected, or as
// many distinct steps, or for TGI the tokens its last step states; never
// the largest counter alone, and never an unknown count.
func TestToSteps(t *testing.T) {
	counter := &preset.Steps{SpanName: "decode_loop", Counter: "decode_ct"}
	plain := &preset.Steps{SpanName: "step"}
	tgi := &preset.Steps{SpanName: "send_generation", FirstTokenFromSteps: true, Generation: "generation"}
	tests := []struct {
		name       string
		kind       *preset.Steps
		steps      []step
		total      int64 // a last step's count (TGI), -1 none
		wantTimes  []uint64
		wantCounts []int64
		complete   map[int64]Progress // expected steps -> progress
	}{
		{name: "none", kind: counter, total: -1, wantTimes: []uint64{}, wantCounts: []int64{},
			complete: map[int64]Progress{0: {}, 1: {Expected: 1}}},
		{name: "in order, no counter", kind: plain, total: -1, steps: []step{{10, -1, 1}, {20, -1, 1}}, wantTimes: []uint64{10, 20},
			wantCounts: []int64{-1, -1}, complete: map[int64]Progress{0: {Seen: 2}, 2: {Seen: 2, Expected: 2, Complete: true}, 3: {Seen: 2, Expected: 3}}},
		{name: "counters 1..4 shuffled", kind: counter, total: -1, steps: []step{{40, 4, 1}, {10, 1, 1}, {30, 3, 1}, {20, 2, 1}},
			wantTimes: []uint64{10, 20, 30, 40}, wantCounts: []int64{-1, 1, 1, 1},
			complete: map[int64]Progress{4: {Seen: 4, Expected: 4, Complete: true}, 5: {Seen: 4, Expected: 5}}},
		{name: "last counter without the middle", kind: counter, total: -1, steps: []step{{10, 1, 1}, {40, 4, 1}},
			wantTimes: []uint64{10, 40}, wantCounts: []int64{-1, 3},
			complete: map[int64]Progress{4: {Seen: 2, Expected: 4}, 0: {Seen: 2}}},
		{name: "a step sent twice counts once", kind: counter, total: -1, steps: []step{{10, 1, 1}, {20, 2, 1}, {20, 2, 1}},
			wantTimes: []uint64{10, 20, 20}, wantCounts: []int64{-1, 1, -1},
			complete: map[int64]Progress{3: {Seen: 2, Expected: 3}, 2: {Seen: 2, Expected: 2, Complete: true}}},
		{name: "a counter beyond the count", kind: counter, total: -1, steps: []step{{10, 1, 1}, {20, 2, 1}, {30, 3, 1}},
			wantTimes: []uint64{10, 20, 30}, wantCounts: []int64{-1, 1, 1},
			complete: map[int64]Progress{2: {Seen: 2, Expected: 2}, 3: {Seen: 3, Expected: 3, Complete: true}}},
		{name: "speculative counter", kind: counter, total: -1, steps: []step{{30, 6, 1}, {10, 2, 1}, {20, 4, 1}}, wantTimes: []uint64{10, 20, 30},
			wantCounts: []int64{-1, 2, 2}, complete: map[int64]Progress{3: {Seen: 1, Expected: 3}, 6: {Seen: 3, Expected: 6}}},
		{name: "counter missing", kind: counter, total: -1, steps: []step{{10, 1, 1}, {20, -1, 1}, {30, 3, 1}},
			wantTimes: []uint64{10, 20, 30}, wantCounts: []int64{-1, -1, -1},
			complete: map[int64]Progress{3: {Seen: 3, Expected: 3, Complete: true}}},
		{name: "tgi, last step states 4 tokens", kind: tgi, total: 4, steps: []step{{30, -1, 2}, {10, -1, 1}, {40, -1, 1}},
			wantTimes: []uint64{10, 30, 40}, wantCounts: []int64{-1, 2, -1},
			complete: map[int64]Progress{0: {Seen: 4, Expected: 4, Complete: true}}},
		{name: "tgi, a step missing", kind: tgi, total: 5, steps: []step{{10, -1, 1}, {50, -1, 1}},
			wantTimes: []uint64{10, 50}, wantCounts: []int64{-1, -1},
			complete: map[int64]Progress{0: {Seen: 2, Expected: 5}}},
		{name: "tgi, no last step", kind: tgi, total: -1, steps: []step{{10, -1, 1}, {20, -1, 1}},
			wantTimes: []uint64{10, 20}, wantCounts: []int64{-1, -1},
			complete: map[int64]Progress{0: {Seen: 2}, 2: {Seen: 2, Expected: 2, Complete: true}}},
		{name: "tgi, last steps disagree", kind: tgi, total: conflicting, steps: []step{{10, -1, 1}, {20, -1, 1}},
			wantTimes: []uint64{10, 20}, wantCounts: []int64{-1, -1},
			complete: map[int64]Progress{0: {Seen: 2}, 2: {Seen: 2}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &traceEntry{kind: tt.kind, total: tt.total, steps: tt.steps, memo: progressMemo{n: -1}}
			for expected, want := range tt.complete {
				assert.Equal(t, want, e.progress(expected), "progress(%d)", expected)
			}
			got := e.toSteps()
			assert.Equal(t, tt.wantTimes, got.Times)
			assert.Equal(t, tt.wantCounts, got.Counts)
		})
	}
}
