// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloprocessor

import (
	"context"
	"math"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/llmslo/llmslo/internal/contract"
	"github.com/llmslo/llmslo/internal/derive"
	"github.com/llmslo/llmslo/internal/metadata"
)

const t0 = 1_767_225_600_000_000_000 // 2026-01-01T00:00:00Z, Unix ns

// oneSpan returns a batch of one span and the span.
func oneSpan(name string, start, end uint64, attrs map[string]any) (ptrace.Traces, ptrace.Span) {
	td := ptrace.NewTraces()
	s := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	s.SetName(name)
	s.SetTraceID(pcommon.TraceID{0xb0})
	s.SetStartTimestamp(pcommon.Timestamp(start))
	s.SetEndTimestamp(pcommon.Timestamp(end))
	if err := s.Attributes().FromRaw(attrs); err != nil {
		panic(err)
	}
	return td, s
}

// bytesPerRun is the heap allocated by one call of f, averaged over runs.
func bytesPerRun(runs int, f func()) uint64 {
	f()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range runs {
		f()
	}
	runtime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / uint64(runs)
}

type bomb struct {
	name     string
	config   func(*Config)
	td       func() ptrace.Traces
	spanName string
	errText  string
	check    func(t *testing.T, s ptrace.Span)
}

func bombs() []bomb {
	return []bomb{
		{
			// 20 chunks each claiming 2^24 tokens, token-aware: one weighted
			// gap per chunk, and a token sum beyond 2^24 refused.
			name:   "chunk token counts",
			config: func(c *Config) { c.TokenAwareITL = true },
			td: func() ptrace.Traces {
				td, s := oneSpan("openai.chat", t0, t0+3e9, map[string]any{"gen_ai.operation.name": "chat"})
				for i := range 20 {
					e := s.Events().AppendEmpty()
					e.SetName("gen_ai.content.completion.chunk")
					e.SetTimestamp(pcommon.Timestamp(t0 + uint64(i+1)*100_000_000))
					e.Attributes().PutInt("gen_ai.usage.output_tokens", derive.MaxTokens)
				}
				return td
			},
			spanName: "openai.chat",
			errText:  "output_tokens:out_of_range",
			check: func(t *testing.T, s ptrace.Span) {
				v, ok := s.Attributes().Get("llm.itl.gap_weights")
				require.True(t, ok)
				w, _ := contract.WeightsOf(v)
				assert.Len(t, w, 19, "one entry per gap")
				assert.Equal(t, int64(derive.MaxTokens), w[0])
			},
		},
		{
			// A 30-day span: its E2E is not taken from the timestamps.
			name: "thirty-day span",
			td: func() ptrace.Traces {
				td, _ := oneSpan("chat m", t0, t0+30*86400*1e9, map[string]any{"gen_ai.operation.name": "chat", "gen_ai.request.stream": false})
				return td
			},
			spanName: "chat m",
			errText:  "span:out_of_range,e2e:out_of_range,output_tokens:not_emitted",
			check: func(t *testing.T, s ptrace.Span) {
				_, ok := s.Attributes().Get("llm.e2e")
				assert.False(t, ok)
			},
		},
		{
			// A span start at 2^63 ns and a Langfuse completion time past
			// int64: refused, never wrapped to a negative time.
			name: "langfuse start beyond int64",
			td: func() ptrace.Traces {
				td, _ := oneSpan("generation", 1<<63, 1<<63+1e9, map[string]any{"langfuse.observation.type": "generation",
					"langfuse.observation.completion_start_time": 9.3e18, "langfuse.observation.usage_details": `{"output": 4}`})
				return td
			},
			spanName: "generation",
			errText:  "span:out_of_range,ttft:invalid_value,e2e:out_of_range",
		},
		{
			// A model name that is not UTF-8 is repaired before it is written.
			name: "invalid UTF-8 model",
			td: func() ptrace.Traces {
				td, _ := oneSpan("llm_request", t0, t0+1e9, map[string]any{"gen_ai.latency.time_to_first_token": 0.1,
					"gen_ai.latency.e2e": 1.0, "gen_ai.usage.completion_tokens": 10, "gen_ai.response.model": "llama\xff\xfe-3"})
				return td
			},
			spanName: "llm_request",
			errText:  "model:invalid_utf8",
			check: func(t *testing.T, s ptrace.Span) {
				m, _ := s.Attributes().Get("llm.model")
				assert.Equal(t, "llama\uFFFD-3", m.Str())
			},
		},
	}
}

// TestBombs sends each hostile span and checks the reason written and the
// heap allocated per span: bounded by the span's own size, whatever
// numbers it carries (a few KiB here, where one expanded gap per claimed
// token would be gigabytes).
func TestBombs(t *testing.T) {
	for _, b := range bombs() {
		t.Run(b.name, func(t *testing.T) {
			cfg, err := loadConfig(t, "golden")
			require.NoError(t, err)
			if b.config != nil {
				b.config(cfg)
			}
			sink := new(consumertest.TracesSink)
			p, err := newProcessor(processortest.NewNopSettings(metadata.Type), cfg, sink)
			require.NoError(t, err)
			out, err := p.processTraces(context.Background(), b.td())
			require.NoError(t, err)
			var got ptrace.Span
			spans := out.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
			for i := 0; i < spans.Len(); i++ {
				if spans.At(i).Name() == b.spanName {
					got = spans.At(i)
				}
			}
			require.NotEqual(t, ptrace.Span{}, got, "the span passes")
			errText, _ := got.Attributes().Get("llm.metrics.error")
			assert.Equal(t, b.errText, errText.Str())
			if b.check != nil {
				b.check(t, got)
			}
			if raceEnabled {
				return
			}
			td := b.td()
			perSpan := bytesPerRun(20, func() { _, _ = p.processTraces(context.Background(), td) })
			assert.Less(t, perSpan, uint64(64<<10), "bytes allocated per batch")
		})
	}
}

func TestBombValuesAreFinite(t *testing.T) {
	assert.Equal(t, derive.OutOfRange, derive.CheckSeconds(30*86400))
	assert.Equal(t, derive.InvalidValue, derive.CheckSeconds(math.Inf(1)))
	assert.Equal(t, derive.OutOfRange, derive.CheckTokens(1<<40))
	assert.Equal(t, derive.NoReason, derive.CheckTokens(derive.MaxTokens))
}

// TestNamespaceOwnership: keys of the processor's namespace that it did not
// write in this pass never survive by default; trust_upstream keeps them.
func TestNamespaceOwnership(t *testing.T) {
	forged := map[string]any{"llm.metrics.source": "vllm:attributes", "llm.slo.anything.met": true,
		"llm.slo.interactive.violations": []any{}, "llm.ttft": 0.001, "llm.token_count.completion": 7, "http.method": "GET",
		"llm.cache_read.input_tokens": 999}
	plain := func() ptrace.Traces { td, _ := oneSpan("GET /", t0, t0+1e9, forged); return td }
	llm := func() ptrace.Traces {
		attrs := map[string]any{"gen_ai.operation.name": "chat", "gen_ai.request.stream": false, "gen_ai.usage.output_tokens": 1,
			"llm.slo.interactive.met": "forged", "llm.slo.forged.met": true, "llm.reasoning.output_tokens": 5}
		td, _ := oneSpan("chat m", t0, t0+1e9, attrs)
		return td
	}
	tests := []struct {
		name  string
		trust bool
		td    func() ptrace.Traces
		want  map[string]any
	}{
		{"plain span loses forged keys", false, plain, map[string]any{"llm.token_count.completion": int64(7), "http.method": "GET"}},
		{"plain span kept under trust", true, plain, map[string]any{"llm.metrics.source": "vllm:attributes", "llm.slo.anything.met": true,
			"llm.slo.interactive.violations": []any{}, "llm.ttft": 0.001, "llm.token_count.completion": int64(7), "http.method": "GET",
			"llm.cache_read.input_tokens": int64(999)}},
		{"LLM span without a source loses a client's verdict", false, llm, map[string]any{"gen_ai.operation.name": "chat",
			"gen_ai.request.stream": false, "gen_ai.usage.output_tokens": int64(1), "llm.e2e": 1.0, "llm.ttft": nil, "llm.tpot": nil,
			"llm.output_tokens": int64(1), "llm.layer": "client", "llm.stream": false, "llm.metrics.source": "semconv:span",
			"llm.slo.interactive.met": true, "llm.slo.smooth_stream.met": true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := loadConfig(t, "golden")
			require.NoError(t, err)
			cfg.TrustUpstream = tt.trust
			out := processWith(t, cfg, processortest.NewNopSettings(metadata.Type), tt.td())
			got := out.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes().AsRaw()
			for k, v := range tt.want {
				if v == nil {
					assert.NotContains(t, got, k)
					delete(tt.want, k)
				}
			}
			assert.Equal(t, tt.want, got)
		})
	}
}
