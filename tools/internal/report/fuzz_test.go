// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/llmslo/llmslo/tools/internal/otlpfile"
	"github.com/llmslo/llmslo/tools/internal/report/render"
)

var writers = map[string]func(io.Writer, *Report) error{
	"text": render.WriteText, "markdown": render.WriteMarkdown, "json": render.WriteJSON, "html": render.WriteHTML,
}

// renderAll writes r in every format: each must succeed, and the HTML
// report shows no NaN (a missing value is shown as missing).
func renderAll(t *testing.T, r *Report) {
	for format, write := range writers {
		var b bytes.Buffer
		require.NoError(t, write(&b, r), format)
		require.NotZero(t, b.Len(), format)
		if format == "html" {
			require.NotContains(t, b.String(), "NaN", "html shows no NaN")
		}
	}
}

// fuzzSpans turns data into engine spans, 8 bytes per value: each span
// takes queue time, TTFT, E2E (float64 seconds, any bits: NaN, ±Inf,
// negative, subnormal), an output token count and a duration (int64, any
// sign), and a model chosen by a byte, so plots, percentiles, rates and
// groups all see hostile values.
func fuzzSpans(data []byte) ptrace.Traces {
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	const per = 6 * 8
	for i := 0; i+per <= len(data) && i < 64*per; i += per {
		word := func(k int) uint64 { return binary.LittleEndian.Uint64(data[i+8*k:]) }
		s := spans.AppendEmpty()
		s.SetName("llm_request")
		start := word(4) % (1 << 62)
		s.SetStartTimestamp(pcommon.Timestamp(start))
		s.SetEndTimestamp(pcommon.Timestamp(start + word(5)%(1<<40)))
		a := s.Attributes()
		a.PutDouble("gen_ai.latency.time_in_queue", math.Float64frombits(word(0)))
		a.PutDouble("gen_ai.latency.time_to_first_token", math.Float64frombits(word(1)))
		a.PutDouble("gen_ai.latency.e2e", math.Float64frombits(word(2)))
		a.PutInt("gen_ai.usage.completion_tokens", int64(word(3)))
		// The parts and a forged causes list (the processor replaces
		// it on a request it judges, keeps it on one it does not).
		a.PutDouble("gen_ai.latency.time_in_model_prefill", math.Float64frombits(word(0)^word(1)))
		a.PutDouble("gen_ai.latency.time_in_model_decode", math.Float64frombits(word(2)^word(3)))
		forged := a.PutEmptySlice("llm.slo.interactive.causes")
		for _, e := range forgedCauses[data[i+2]%4] {
			forged.AppendEmpty().SetStr(e)
		}
		a.PutStr("gen_ai.request.model", string(rune('a'+data[i]%4)))
		if data[i+1]&1 == 1 {
			s.Status().SetCode(ptrace.StatusCodeError)
		}
	}
	return td
}

// forgedCauses are causes lists a span may carry before the processor:
// valid, duplicate, outside the closed set, of an unknown constraint.
var forgedCauses = [][]string{{"ttft:queue"}, {"ttft:queue", "ttft:prefill", "e2e:decode"}, {"ttft:gremlins", ":", ""}, {"bogus:queue"}}

// FuzzRenderers: any values on engine spans give a report in every format,
// with no panic and no error.
func FuzzRenderers(f *testing.F) {
	f64 := func(vs ...float64) []byte {
		var b []byte
		for _, v := range vs {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
		}
		return b
	}
	span := func(q, ttft, e2e float64, tokens, start, dur uint64) []byte {
		b := f64(q, ttft, e2e)
		for _, u := range []uint64{tokens, start, dur} {
			b = binary.LittleEndian.AppendUint64(b, u)
		}
		return b
	}
	f.Add([]byte{})
	f.Add(span(0.0002, 0.1, 1, 10, 1e18, 1e9))
	f.Add(append(span(0, 0, 0, 0, 0, 0), span(0, 0, 0, 0, 0, 0)...))
	f.Add(span(math.NaN(), math.Inf(1), math.Inf(-1), 1<<63, 1e18, 1))
	f.Add(append(span(-1, 5e-324, math.MaxFloat64, 3, 1e18, 0), span(1e-300, 1e300, 2, 1, 1e18, 1<<39)...))
	opts := goldenOptions(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := NewEngine(context.Background(), opts)
		require.NoError(t, err)
		require.NoError(t, e.Consume(context.Background(), fuzzSpans(data)))
		require.NoError(t, e.Close(context.Background()))
		renderAll(t, e.Report(nil))
	})
}

// FuzzReadThenRender: any input file is read within small limits (an error
// is fine: it is the user's answer) and whatever it yielded is reported in
// every format.
func FuzzReadThenRender(f *testing.F) {
	body, err := ptraceotlp.NewExportRequestFromTraces(fuzzSpans(bytes.Repeat([]byte{7}, 96))).MarshalProto()
	require.NoError(f, err)
	js, err := ptraceotlp.NewExportRequestFromTraces(fuzzSpans(bytes.Repeat([]byte{9}, 48))).MarshalJSON()
	require.NoError(f, err)
	f.Add(body)
	f.Add(binary.BigEndian.AppendUint32(nil, uint32(len(body))))
	f.Add(append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...))
	f.Add(js)
	f.Add([]byte("{}\n{\"resourceSpans\":[{}]}"))
	f.Add([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff})
	opts := goldenOptions(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := NewEngine(context.Background(), opts)
		require.NoError(t, err)
		rd := otlpfile.NewReader(otlpfile.ReadLimits{MaxDecodedBytes: 1 << 22, MaxGzipDepth: 2})
		readErr := rd.Read(bytes.NewReader(data), nil, func(td ptrace.Traces) error {
			return e.Consume(context.Background(), td)
		})
		if readErr != nil {
			require.NotEmpty(t, strings.TrimSpace(readErr.Error()))
		}
		require.NoError(t, e.Close(context.Background()))
		renderAll(t, e.Report(nil))
	})
}
