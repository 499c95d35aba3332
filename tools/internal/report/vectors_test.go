// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// The reference vectors of shared/reference/metric-definitions.md §10 as
// OpenLLMetry-style client spans: one chunk event per SSE event, the token
// count 0 on the role and usage chunks, the span ending at [DONE].

// base is 2026-01-01T00:00:00Z, the vectors' t0.
var base = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()

type ev struct {
	at    int64 // ns after the request start
	count int64 // output tokens in the chunk; -1: no count attribute
}

type req struct {
	id     uint64
	start  int64 // ns after base
	events []ev
	end    int64 // ns after start
	n      int64 // usage count; -1: none
	model  string
	failed bool
}

const msec = int64(time.Millisecond)

func chat(td ptrace.Traces, r req) {
	var rs ptrace.ResourceSpans
	if td.ResourceSpans().Len() == 0 {
		rs = td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", "bench")
		rs.ScopeSpans().AppendEmpty().Scope().SetName("vectors")
	}
	rs = td.ResourceSpans().At(0)
	s := rs.ScopeSpans().At(0).Spans().AppendEmpty()
	model := r.model
	if model == "" {
		model = "llama"
	}
	s.SetName("chat " + model)
	s.SetKind(ptrace.SpanKindClient)
	var tid [16]byte
	var sid [8]byte
	tid[0] = 0xf0
	binary.BigEndian.PutUint64(tid[8:], r.id)
	binary.BigEndian.PutUint64(sid[:], 0xa000000000000000|r.id)
	s.SetTraceID(pcommon.TraceID(tid))
	s.SetSpanID(pcommon.SpanID(sid))
	start := base + r.start
	s.SetStartTimestamp(pcommon.Timestamp(start))
	s.SetEndTimestamp(pcommon.Timestamp(start + r.end))
	a := s.Attributes()
	a.PutStr("gen_ai.operation.name", "chat")
	a.PutStr("gen_ai.request.model", model)
	a.PutBool("gen_ai.request.stream", true)
	if r.n >= 0 {
		a.PutInt("gen_ai.usage.output_tokens", r.n)
	}
	if r.failed {
		s.Status().SetCode(ptrace.StatusCodeError)
	}
	for _, e := range r.events {
		x := s.Events().AppendEmpty()
		x.SetName("gen_ai.content.completion.chunk")
		x.SetTimestamp(pcommon.Timestamp(start + e.at))
		if e.count >= 0 {
			x.Attributes().PutInt("gen_ai.usage.output_tokens", e.count)
		}
	}
}

func traces(rs ...req) ptrace.Traces {
	td := ptrace.NewTraces()
	for _, r := range rs {
		chat(td, r)
	}
	return td
}

// vectors are the files of testdata/vectors, by name.
func vectors() map[string]ptrace.Traces {
	ms := func(x int64) int64 { return x * msec }
	return map[string]ptrace.Traces{
		// V1: chat stream, 1 token per chunk, N = 5.
		"v1": traces(req{id: 1, n: 5, end: ms(202), events: []ev{
			{ms(90), 0}, {ms(100), 1}, {ms(120), 1}, {ms(140), 1}, {ms(170), 1}, {ms(200), 1}, {ms(201), 0}}}),
		// V2: one output token.
		"v2": traces(req{id: 2, n: 1, end: ms(102), events: []ev{{ms(90), 0}, {ms(100), 1}, {ms(101), 0}}}),
		// V3: a 3-token chunk, completions API (no role chunk).
		"v3": traces(req{id: 3, n: 5, end: ms(152), events: []ev{{ms(100), 1}, {ms(130), 3}, {ms(150), 1}, {ms(151), 0}}}),
		// V4: GenAI-Perf's half-even rounding (its own test: request at
		// 1 ns, responses at 3, 5, 8 ns, N = 3 -> round(2.5) = 2; and
		// ((18-5)-2)/(4-1) = 11/3 -> 4).
		"v4_rounding": traces(
			req{id: 41, n: 3, end: 7, events: []ev{{2, 1}, {4, 1}, {7, 1}}},
			req{id: 42, n: 4, start: 1000, end: 13, events: []ev{{2, 1}, {6, 1}, {10, 1}, {13, 1}}}),
		// V4: percentiles of [10, 20, 30, 40] ms (TTFT of four requests).
		"v4_percentiles": traces(
			req{id: 43, n: 2, end: ms(50), events: []ev{{ms(10), 1}, {ms(50), 1}}},
			req{id: 44, n: 2, start: ms(100), end: ms(60), events: []ev{{ms(20), 1}, {ms(60), 1}}},
			req{id: 45, n: 2, start: ms(200), end: ms(70), events: []ev{{ms(30), 1}, {ms(70), 1}}},
			req{id: 46, n: 2, start: ms(300), end: ms(80), events: []ev{{ms(40), 1}, {ms(80), 1}}}),
		// V4: GuideLLM's weighted ITL: A has ITL 10 ms with N = 2 (weight
		// 1), B 30 ms with N = 4 (weight 3).
		"v4_weighted": traces(
			req{id: 47, n: 2, end: ms(110), events: []ev{{ms(100), 1}, {ms(110), 1}}},
			req{id: 48, n: 4, start: ms(500), end: ms(190), events: []ev{{ms(100), 1}, {ms(130), 1}, {ms(160), 1}, {ms(190), 1}}}),
	}
}

// writeVectors writes the vector files (go test -update).
func writeVectors(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var m ptrace.JSONMarshaler
	for name, td := range vectors() {
		b, err := m.MarshalTraces(td)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name+".json"), append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	return nil
}
