// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	llmsloprocessor "github.com/llmslo/llmslo"

	"github.com/llmslo/llmslo/tools/internal/report/render"
	"github.com/llmslo/llmslo/tools/internal/report/schema"
)

// sloCorpus: the interactive SLO (TTFT <= 500 ms, TPOT <= 15 ms, E2E <=
// 2 s) over six requests with known outcomes.
func sloCorpus() ptrace.Traces {
	ms := func(x int64) int64 { return x * msec }
	two := func(id uint64, ttft, last int64) req {
		return req{id: id, start: ms(int64(id) * 1000), n: 2, end: ms(last + 1), events: []ev{{ms(ttft), 1}, {ms(last), 1}}}
	}
	failed := two(5, 100, 110)
	failed.failed = true
	return traces(
		two(1, 100, 110), // met: TTFT 100 ms, TPOT 10 ms
		two(2, 600, 610), // TTFT
		two(3, 600, 700), // TTFT and TPOT (100 ms)
		two(4, 100, 200), // TPOT
		failed,           // error
		req{id: 6, start: ms(6000), n: 5, end: ms(300)}, // streaming, no chunk timing: TTFT unknown
	)
}

func TestSLOBreakdownAndSweep(t *testing.T) {
	e, err := NewEngine(context.Background(), goldenOptions(t))
	require.NoError(t, err)
	require.NoError(t, e.Consume(context.Background(), sloCorpus()))
	require.NoError(t, e.Close(context.Background()))
	r := e.Report(nil)
	require.Equal(t, "interactive", r.SLOs[0].Name)
	assert.Equal(t, "bad", r.SLOs[0].UnknownVerdicts)
	assert.Equal(t, "requests", r.SLOs[0].Denominator)
	g := r.SLOs[0].Groups[0]
	assert.Equal(t, int64(6), g.Requests)
	assert.Equal(t, int64(1), g.Met)
	assert.Equal(t, int64(4), g.Violated)
	assert.Equal(t, int64(1), g.Unknown)
	assert.Equal(t, schema.Num(1.0/6), g.Goodput)
	lo, hi := wilson(1, 6)
	assert.Equal(t, [2]schema.Num{schema.Num(lo), schema.Num(hi)}, g.GoodputCI95)
	assert.InDelta(t, 0.0301, lo, 1e-4) // Wilson 95% for 1 of 6
	assert.InDelta(t, 0.5635, hi, 1e-4)
	assert.Equal(t, map[string]int64{"ttft": 2, "tpot": 2, "error": 1, "ttft:unknown": 1, "tpot:unknown": 1}, g.Violations)
	assert.Equal(t, []schema.Combination{
		{Constraints: []string{"error"}, Requests: 1},
		{Constraints: []string{"tpot"}, Requests: 1},
		{Constraints: []string{"ttft"}, Requests: 1},
		{Constraints: []string{"ttft", "tpot"}, Requests: 1},
	}, g.Combinations)
	assert.Equal(t, map[string]schema.Num{"ttft": schema.Num(2.0 / 6), "tpot": schema.Num(2.0 / 6), "e2e": schema.Num(1.0 / 6)}, g.Attainable)
	assert.Equal(t, int64(2), g.OutputTokensMet)
	assert.Equal(t, int64(15), g.OutputTokens)

	sweep := r.Sweep[0]
	require.Equal(t, "interactive", sweep.SLO)
	require.Len(t, sweep.Points, 17)
	met := map[float64]int64{}
	for _, p := range sweep.Points {
		met[p.Scale] = p.Met
	}
	assert.Equal(t, int64(0), met[0.25]) // TPOT 10 ms > 3.75 ms
	assert.Equal(t, int64(1), met[1])    // the processor's verdicts
	assert.Equal(t, int64(2), met[4])    // TTFT 2 s, TPOT 60 ms: R1, R2
	// Met counts never fall as the thresholds loosen.
	for i := 1; i < len(sweep.Points); i++ {
		assert.GreaterOrEqual(t, sweep.Points[i].Met, sweep.Points[i-1].Met)
	}
	var tl int64
	for _, b := range r.Timeline[0].Buckets {
		tl += b.Met + b.Violated + b.Unknown
	}
	assert.Equal(t, int64(6), tl)
	assert.Equal(t, "f0000000000000000000000000000003", r.Slowest["tpot"][0].TraceID)
	assert.Equal(t, "a000000000000003", r.Slowest["tpot"][0].SpanID)
}

// TestSLOExcludeUnknown: the corpus of TestSLOBreakdownAndSweep under
// unknown_verdicts: exclude. The counts are the same (1 met, 4 violated, 1
// unknown of 6); goodput is 1 / (1 + 4), its interval Wilson's for 1 of 5;
// without TTFT or TPOT, 2 of the 5 requests still decidable would meet it
// (request 6 stays unknown on the other), without E2E 1 of 5; the sweep at
// 1x is 1/5 and at 4x 2/5 (request 6 fails no known value, so stays out).
// The text names the denominator.
func TestSLOExcludeUnknown(t *testing.T) {
	opts := goldenOptionsWith(t, func(cfg *llmsloprocessor.Config) {
		cfg.SLOs = slices.Clone(cfg.SLOs)
		cfg.SLOs[0].UnknownVerdicts = "exclude"
	})
	e, err := NewEngine(context.Background(), opts)
	require.NoError(t, err)
	require.NoError(t, e.Consume(context.Background(), sloCorpus()))
	require.NoError(t, e.Close(context.Background()))
	r := e.Report(nil)
	s := r.SLOs[0]
	require.Equal(t, "interactive", s.Name)
	assert.Equal(t, "exclude", s.UnknownVerdicts)
	assert.Equal(t, "decidable requests", s.Denominator)
	g := s.Groups[0]
	assert.Equal(t, [4]int64{6, 1, 4, 1}, [4]int64{g.Requests, g.Met, g.Violated, g.Unknown})
	assert.Equal(t, schema.Num(1.0/5), g.Goodput)
	lo, hi := wilson(1, 5)
	assert.Equal(t, [2]schema.Num{schema.Num(lo), schema.Num(hi)}, g.GoodputCI95)
	assert.Equal(t, map[string]schema.Num{"ttft": schema.Num(2.0 / 5), "tpot": schema.Num(2.0 / 5), "e2e": schema.Num(1.0 / 5)}, g.Attainable)
	goodput := map[float64]schema.Num{}
	for _, p := range r.Sweep[0].Points {
		goodput[p.Scale] = p.Goodput
	}
	assert.Equal(t, schema.Num(1.0/5), goodput[1])
	assert.Equal(t, schema.Num(2.0/5), goodput[4])

	var b strings.Builder
	require.NoError(t, render.WriteText(&b, r))
	text := strings.Join(strings.Fields(b.String()), " ") // the text wraps its paragraphs
	assert.Contains(t, text, "goodput of decidable")
	assert.Contains(t, text, "Unknown verdicts excluded (unknown_verdicts: exclude): goodput = met / (met + violated), over the decidable requests.")
}
