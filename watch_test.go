// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloprocessor

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/llmslo/llmslo/internal/metadata"
)

// A request span of the tests below: a streamed GenAI conventions span
// (preset semconv) with or without its TTFT, or a vLLM engine span.
type watchSpan uint8

const (
	semconvNoTTFT watchSpan = iota
	semconvTTFT
	vllmSpan
	semconvFailed
)

func watchBatch(model string, spans ...watchSpan) ptrace.Traces {
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	start := time.Unix(1_800_000_000, 0)
	for i, k := range spans {
		s := ss.AppendEmpty()
		s.SetTraceID(pcommon.TraceID{byte(i + 1)})
		s.SetSpanID(pcommon.SpanID{byte(i + 1)})
		s.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
		s.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(2 * time.Second)))
		a := s.Attributes()
		if k == vllmSpan {
			s.SetName("llm_request")
			s.SetKind(ptrace.SpanKindServer)
			a.PutDouble("gen_ai.latency.time_to_first_token", 0.2)
			a.PutDouble("gen_ai.latency.e2e", 2)
			a.PutInt("gen_ai.usage.completion_tokens", 50)
			a.PutStr("gen_ai.request.model", model)
			continue
		}
		s.SetName("chat " + model)
		s.SetKind(ptrace.SpanKindClient)
		a.PutStr("gen_ai.operation.name", "chat")
		a.PutStr("gen_ai.request.model", model)
		a.PutBool("gen_ai.request.stream", true)
		a.PutInt("gen_ai.usage.output_tokens", 50)
		if k == semconvTTFT {
			a.PutDouble("gen_ai.response.time_to_first_chunk", 0.2)
		}
		if k == semconvFailed {
			s.Status().SetCode(ptrace.StatusCodeError)
		}
	}
	return td
}

// watchStep is a batch sent at a time after the first.
type watchStep struct {
	at    time.Duration
	model string
	spans []watchSpan
}

// runWatch sends the steps through a processor with the SLOs, its clock
// at each step's time, and returns the Warn logs.
func runWatch(t *testing.T, slos []SLOConfig, steps []watchStep) []observer.LoggedEntry {
	t.Helper()
	core, logs := observer.New(zapcore.WarnLevel)
	set := processortest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(core)
	cfg := createDefaultConfig().(*Config)
	cfg.SLOs = slos
	require.NoError(t, cfg.Validate())
	p, err := newProcessor(set, cfg, consumertest.NewNop())
	require.NoError(t, err)
	t0 := time.Unix(1_900_000_000, 0)
	var now time.Time
	p.watch.now = func() time.Time { return now }
	for _, s := range steps {
		now = t0.Add(s.at)
		_, err := p.processTraces(context.Background(), watchBatch(s.model, s.spans...))
		require.NoError(t, err)
	}
	return logs.All()
}

func TestUndecidableWarning(t *testing.T) {
	ttftSLO := []SLOConfig{{Name: "interactive", TTFT: dur(500 * time.Millisecond), E2E: dur(5 * time.Second)}}
	logged := map[string]any{"slo": "interactive", "constraint": "ttft", "preset": "semconv",
		"see": "https://github.com/llmslo/llmslo/blob/main/docs/producers.md#what-your-producer-gives"}
	n := []watchSpan{semconvNoTTFT, semconvNoTTFT, semconvNoTTFT}
	for _, tc := range []struct {
		name  string
		steps []watchStep
		want  []map[string]any
	}{
		{"every request unknown: logged once, not again the next minutes", []watchStep{
			{0, "m", n}, {30 * time.Second, "m", n}, {61 * time.Second, "m", n}, {2 * time.Minute, "m", n}, {4 * time.Minute, "m", n},
		}, []map[string]any{logged}},
		{"beside a preset that decides it: only the undecidable preset", []watchStep{
			{0, "m", []watchSpan{vllmSpan, semconvNoTTFT, vllmSpan}}, {time.Minute, "m", []watchSpan{vllmSpan}},
		}, []map[string]any{logged}},
		{"one request of the preset decided it: not logged", []watchStep{
			{0, "m", n}, {10 * time.Second, "m", []watchSpan{semconvTTFT}}, {time.Minute, "m", n}, {90 * time.Second, "m", n},
		}, nil},
		{"a minute not yet over: not logged", []watchStep{{0, "m", n}, {59 * time.Second, "m", n}}, nil},
		{"failed requests are not counted against it", []watchStep{
			{0, "m", []watchSpan{semconvFailed, semconvNoTTFT}}, {time.Minute, "m", n},
		}, []map[string]any{logged}},
		{"only failed requests: not logged", []watchStep{
			{0, "m", []watchSpan{semconvFailed}}, {time.Minute, "m", []watchSpan{semconvFailed}},
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs := runWatch(t, ttftSLO, tc.steps)
			require.Len(t, logs, len(tc.want))
			for i, e := range logs {
				assert.Equal(t, zapcore.WarnLevel, e.Level)
				assert.Equal(t, "every request of this producer preset left this SLO constraint unknown for a minute: "+
					"the producer does not give the value, so the SLO cannot judge it", e.Message)
				assert.Equal(t, tc.want[i], e.ContextMap())
			}
		})
	}
}

func TestSelectorIdleWarning(t *testing.T) {
	slos := []SLOConfig{
		{Name: "clients", E2E: dur(5 * time.Second), Selector: SelectorConfig{Layer: "client"}},
		{Name: "typo", E2E: dur(5 * time.Second), Selector: SelectorConfig{Layer: "client", Models: []string{"gtp-4o"}}},
	}
	var every []watchStep
	for m := range 15 {
		every = append(every, watchStep{time.Duration(m) * time.Minute, "gpt-4o", []watchSpan{semconvTTFT}})
	}
	logged := map[string]any{"slo": "typo", "selector": "layer client; models gtp-4o", "idle": 10 * time.Minute}
	for _, tc := range []struct {
		name  string
		steps []watchStep
		want  []map[string]any
	}{
		{"matched nothing for 10 minutes while another matched: logged once", every, []map[string]any{logged}},
		{"9 minutes: not yet", every[:10], nil},
		{"it matched within the 10 minutes: not logged", append([]watchStep{
			{5 * time.Minute, "gtp-4o", []watchSpan{semconvTTFT}},
		}, every[5:14]...), nil},
		{"it matched, then nothing for 10 minutes: logged", append([]watchStep{
			{0, "gtp-4o", []watchSpan{semconvTTFT}},
		}, every[1:]...), []map[string]any{logged}},
		{"no other SLO matched either: not logged", []watchStep{
			{0, "gpt-4o", []watchSpan{semconvTTFT}}, {11 * time.Minute, "x", []watchSpan{vllmSpan}}, {12 * time.Minute, "x", []watchSpan{vllmSpan}},
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs := runWatch(t, slos, tc.steps)
			require.Len(t, logs, len(tc.want))
			for i, e := range logs {
				assert.Equal(t, zapcore.WarnLevel, e.Level)
				assert.Equal(t, "this SLO's selector matched no request for 10 minutes while other SLOs of this processor did: "+
					"check the selector (a mistyped model, preset or attribute value?)", e.Message)
				assert.Equal(t, tc.want[i], e.ContextMap())
			}
		})
	}
}

// TestWatchConcurrent sends batches from several goroutines at once (the
// race detector checks the watch's state) and still logs once.
func TestWatchConcurrent(t *testing.T) {
	core, logs := observer.New(zapcore.WarnLevel)
	set := processortest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(core)
	cfg := createDefaultConfig().(*Config)
	cfg.SLOs = []SLOConfig{{Name: "interactive", TTFT: dur(500 * time.Millisecond)}}
	p, err := newProcessor(set, cfg, consumertest.NewNop())
	require.NoError(t, err)
	t0 := time.Unix(1_900_000_000, 0)
	var late atomic.Bool
	p.watch.now = func() time.Time {
		if late.Load() {
			return t0.Add(time.Minute)
		}
		return t0
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 50 {
				_, err := p.processTraces(context.Background(), watchBatch("m", semconvNoTTFT, semconvNoTTFT))
				assert.NoError(t, err)
			}
		})
	}
	wg.Wait()
	late.Store(true)
	_, err = p.processTraces(context.Background(), watchBatch("m", semconvNoTTFT))
	require.NoError(t, err)
	assert.Len(t, logs.All(), 1)
}
