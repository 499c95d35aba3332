// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/llmslo/llmslo/internal/metadata"
)

// TestUnmatchedWarning: when for a minute spans arrive and none carries the
// processor's attributes, the connector logs one warning naming the likely
// cause; LLM spans, or less than a minute, say nothing.
func TestUnmatchedWarning(t *testing.T) {
	plain := func(s ptrace.SpanSlice, _ int) { s.AppendEmpty().SetName("GET /") }
	foreign := func(s ptrace.SpanSlice, _ int) {
		sp := s.AppendEmpty()
		sp.Attributes().PutStr("acme.metrics.source", "vllm:attributes")
	}
	llm := func(s ptrace.SpanSlice, _ int) { llmSpan(s, "m", 0.1, 0.01, 1, true) }
	const head = "for 1m0s the llm_slo connector received spans but none carried llm.metrics.source, so it emits no metrics: "
	for _, tc := range []struct {
		name      string
		processor bool
		fill      func(ptrace.SpanSlice, int)
		over      time.Duration // batches every 10 s over this span of time
		want      string        // "" for no warning
	}{
		{name: "no processor in the collector", fill: plain, over: 3 * time.Minute,
			want: head + `no llm_slo processor runs in this collector: put one before the connector in the traces pipeline (or, if an earlier collector runs it, check that its attribute_prefix is "llm.")`},
		{name: "processor not in front", processor: true, fill: plain, over: 2 * time.Minute,
			want: head + `the llm_slo processors llm_slo write under "llm.": is one of them in the same traces pipeline, before the connector?`},
		{name: "another prefix", fill: foreign, over: 2 * time.Minute,
			want: head + `spans carry acme.metrics.source: they were written under attribute_prefix "acme.", and this connector reads "llm."`},
		{name: "less than a minute", fill: plain, over: 50 * time.Second},
		{name: "LLM spans", fill: llm, over: 3 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.processor {
				register(t, "llm.")
			}
			core, logs := observer.New(zapcore.WarnLevel)
			set := connectortest.NewNopSettings(metadata.Type).TelemetrySettings
			set.Logger = zap.New(core)
			now := fixedNow
			c, err := newConnector(set, caseConfig(t, "exponential"), consumertest.NewNop(), withClock(func() time.Time { return now }))
			require.NoError(t, err)
			require.NoError(t, c.Start(context.Background(), componenttest.NewNopHost()))
			for at := time.Duration(0); at <= tc.over; at += 10 * time.Second {
				now = fixedNow.Add(at)
				require.NoError(t, c.ConsumeTraces(context.Background(), batch(2, tc.fill)))
			}
			require.NoError(t, c.Shutdown(context.Background()))
			if tc.want == "" {
				assert.Zero(t, logs.Len())
				return
			}
			require.Equal(t, 1, logs.Len(), "one warning, however long it lasts")
			assert.Equal(t, tc.want, logs.All()[0].Message)
		})
	}
}

// TestUnmatchedStretchResets: an LLM span ends the stretch, so a
// pipeline that mixes LLM and other spans never warns.
func TestUnmatchedStretchResets(t *testing.T) {
	core, logs := observer.New(zapcore.WarnLevel)
	set := connectortest.NewNopSettings(metadata.Type).TelemetrySettings
	set.Logger = zap.New(core)
	now := fixedNow
	c, err := newConnector(set, caseConfig(t, "exponential"), consumertest.NewNop(), withClock(func() time.Time { return now }))
	require.NoError(t, err)
	for at := time.Duration(0); at <= 5*time.Minute; at += 10 * time.Second {
		now = fixedNow.Add(at)
		fill := func(s ptrace.SpanSlice, _ int) { s.AppendEmpty() }
		if at%(50*time.Second) == 0 {
			fill = func(s ptrace.SpanSlice, _ int) { llmSpan(s, "m", 0.1, 0.01, 1, true) }
		}
		require.NoError(t, c.ConsumeTraces(context.Background(), batch(1, fill)))
	}
	assert.Zero(t, logs.Len())
}
