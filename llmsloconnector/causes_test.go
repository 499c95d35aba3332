// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// violationsByCause sums llm.slo.violations by "<constraint> <cause>"
// ("<constraint> -" without llm.slo.cause).
func violationsByCause(md pmetric.Metrics) map[string]int64 {
	got := map[string]int64{}
	forPoints(md, metricSLOViolations.name, func(_ pmetric.Metric, attrs pcommon.Map, dp any) {
		constraint, _ := attrs.Get(attrSLOConstraint)
		cause := "-"
		if v, ok := attrs.Get(attrSLOCause); ok {
			cause = v.Str()
		}
		got[constraint.Str()+" "+cause] += dp.(pmetric.NumberDataPoint).IntValue()
	})
	return got
}

// putStrs sets key to a string slice.
func putStrs(s ptrace.Span, key string, values ...string) {
	sl := s.Attributes().PutEmptySlice(key)
	for _, v := range values {
		sl.AppendEmpty().SetStr(v)
	}
}

// TestViolationsByCause: a failed latency constraint is counted under the
// cause llm.slo.<name>.causes gives it (the entry for that constraint,
// wherever it stands in the list); error, <constraint>:unknown and a
// failed constraint of a span without causes (an older processor) carry
// no llm.slo.cause.
func TestViolationsByCause(t *testing.T) {
	register(t, "llm.", "interactive")
	td := batch(6, func(spans ptrace.SpanSlice, i int) {
		s := llmSpan(spans, "m", 0.9, 0.01, 3, false)
		switch i {
		case 0:
			putStrs(s, "llm.slo.interactive.causes", "ttft:queue")
		case 1: // two constraints, causes in another order than violations
			putStrs(s, "llm.slo.interactive.violations", "ttft", "e2e")
			putStrs(s, "llm.slo.interactive.causes", "e2e:output_length", "ttft:prefill")
		case 2: // an older processor: no causes
		case 3: // failed
			putStrs(s, "llm.slo.interactive.violations", "error")
		case 4: // undecidable and failed: only the failed one has a cause
			putStrs(s, "llm.slo.interactive.violations", "ttft", "tpot:unknown")
			putStrs(s, "llm.slo.interactive.causes", "ttft:network")
		case 5: // causes before the verdict in the attribute order
			s.Attributes().Clear()
			putStrs(s, "llm.slo.interactive.causes", "queue_time:queue")
			s.Attributes().PutStr("llm.model", "m")
			s.Attributes().PutStr("llm.layer", "client")
			s.Attributes().PutStr("llm.metrics.source", "semconv:attributes")
			s.Attributes().PutBool("llm.slo.interactive.met", false)
			putStrs(s, "llm.slo.interactive.violations", "queue_time")
		}
	})
	c, tel := telemetryConnector(t, caseConfig(t, "delta"))
	require.NoError(t, c.ConsumeTraces(context.Background(), td))
	assert.Equal(t, map[string]int64{
		"ttft queue": 1, "ttft prefill": 1, "e2e output_length": 1, "ttft -": 1, "error -": 1,
		"ttft network": 1, "tpot:unknown -": 1, "queue_time queue": 1,
	}, violationsByCause(c.collect(fixedNow)))
	_, err := tel.GetMetric(telemetryDefs.rejected.name)
	assert.Error(t, err, "nothing rejected")
}

// TestForgedCauses: a causes entry that cannot come from the processor — a
// cause outside the closed set, a malformed entry, a second cause for one
// constraint, a cause of a constraint that did not fail, a value of the
// wrong type, causes without a verdict — adds no series and is counted as
// a rejected value; the violation itself is still counted, without a cause.
func TestForgedCauses(t *testing.T) {
	register(t, "llm.", "interactive")
	forged := []func(s ptrace.Span){
		func(s ptrace.Span) { putStrs(s, "llm.slo.interactive.causes", "ttft:gpu") },
		func(s ptrace.Span) { putStrs(s, "llm.slo.interactive.causes", "ttft") },
		func(s ptrace.Span) { putStrs(s, "llm.slo.interactive.causes", "ttft:unknown") },
		func(s ptrace.Span) { putStrs(s, "llm.slo.interactive.causes", "latency:queue") },
		func(s ptrace.Span) { putStrs(s, "llm.slo.interactive.causes", "e2e:queue") },                  // e2e did not fail
		func(s ptrace.Span) { putStrs(s, "llm.slo.interactive.causes", "ttft:queue", "ttft:prefill") }, // the second
		func(s ptrace.Span) { s.Attributes().PutStr("llm.slo.interactive.causes", "ttft:queue") },
		func(s ptrace.Span) {
			s.Attributes().PutEmptySlice("llm.slo.interactive.causes").AppendEmpty().SetInt(1)
		},
		func(s ptrace.Span) { putStrs(s, "llm.slo.forged.causes", "ttft:queue") }, // no verdict of SLO forged
	}
	td := batch(len(forged)+1, func(spans ptrace.SpanSlice, i int) {
		if i == len(forged) { // a met request with a cause
			putStrs(llmSpan(spans, "m", 0.1, 0.01, 1, true), "llm.slo.interactive.causes", "ttft:queue")
			return
		}
		forged[i](llmSpan(spans, "m", 0.9, 0.01, 1, false))
	})
	c, tel := telemetryConnector(t, caseConfig(t, "delta"))
	require.NoError(t, c.ConsumeTraces(context.Background(), td))
	md := c.collect(fixedNow)
	assert.Equal(t, map[string]int64{"ttft -": int64(len(forged)) - 1, "ttft queue": 1}, violationsByCause(md))
	assert.Equal(t, int64(len(forged)+1), sumOver(md, metricSLORequests.name, nil), "one verdict per span, none of SLO forged")
	assert.Equal(t, int64(len(forged)+1), counter(t, tel, telemetryDefs.rejected))
	_, err := tel.GetMetric(telemetryDefs.verdictsIgnored.name)
	assert.Error(t, err, "no verdict ignored: causes alone are not a verdict")
}

// TestCausesTeachNoName: with no processor registered, SLO names are
// learned from verdicts only: causes alone teach none and count no
// request.
func TestCausesTeachNoName(t *testing.T) {
	c, _ := telemetryConnector(t, caseConfig(t, "delta"))
	require.Empty(t, c.src.processors)
	td := batch(1, func(spans ptrace.SpanSlice, _ int) {
		s := llmSpan(spans, "m", 0.1, 0.01, 1, true)
		putStrs(s, "llm.slo.forged.causes", "ttft:queue")
	})
	require.NoError(t, c.ConsumeTraces(context.Background(), td))
	assert.Equal(t, []string{"interactive"}, *c.src.names.list.Load())
	assert.Equal(t, int64(1), sumOver(c.collect(fixedNow), metricSLORequests.name, nil))
}
