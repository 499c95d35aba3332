// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// hostileReportInput is one input of TestReportHostileInputs: a file
// written by write, and what llmslo report must answer in every format.
type hostileReportInput struct {
	name  string
	write func(t *testing.T, path string)
	// wantErr, if not empty, is the one-line error expected (a regular
	// expression); else a report, with stderr matching wantWarn if set.
	wantErr, wantWarn string
	// maxRSSMiB bounds the peak resident set of each run.
	maxRSSMiB float64
}

// TestReportHostileInputs: `llmslo report`, as a user runs it, on the
// inputs an adversarial tester tried: each gives a report or a clear
// one-line error in every format, never a panic, within a stated peak RSS.
// Before, a 96 KB gzip of empty spans took 7.75 GB, 20,000 gzip layers
// 1.35 GB, a 694 MB JSON document 4.18 GB, a million models 4.2 GB and a
// 428 MB text report, and the HTML report panicked on one span. Measured
// now (the -v log): 23 MiB for the small inputs, 64 MiB for the 17 MiB
// record, 29 MiB to refuse the layers, about 410 MiB to refuse the JSON
// document, 450-550 MiB for the empty spans, about 330 MiB for a million
// models (reported as 999 groups and an overflow group).
func TestReportHostileInputs(t *testing.T) {
	bin, err := buildCLI()
	require.NoError(t, err)
	dir := t.TempDir()
	for _, in := range hostileReportInputs() {
		path := filepath.Join(dir, in.name)
		in.write(t, path)
		st, err := os.Stat(path)
		require.NoError(t, err)
		for _, format := range []string{"text", "markdown", "json", "html"} {
			t.Run(in.name+"/"+format, func(t *testing.T) {
				out := filepath.Join(dir, "report."+format)
				cmd, peakRSS := launched(t, bin, "report", "--quiet", "--format", format, "--out", out, path)
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				runErr := cmd.Run()
				floor, rss := peakRSS()
				outSize := int64(0)
				if o, err := os.Stat(out); err == nil && runErr == nil {
					outSize = o.Size()
				}
				_ = os.Remove(out)
				t.Logf("input %d bytes: exit %d, peak RSS %.0f MiB (floor %.0f), report %d bytes, stderr %q",
					st.Size(), cmd.ProcessState.ExitCode(), rss, floor, outSize, strings.TrimSpace(stderr.String()))
				assert.NotContains(t, stderr.String(), "goroutine ", "no stack trace")
				assert.LessOrEqual(t, rss, in.maxRSSMiB, "peak RSS, MiB")
				if in.wantErr != "" {
					require.Error(t, runErr)
					assert.Regexp(t, "^llmslo: "+in.wantErr+"\n$", stderr.String())
					return
				}
				require.NoError(t, runErr, stderr.String())
				assert.Positive(t, outSize)
				assert.Less(t, outSize, int64(8<<20), "a report of bounded length")
				if in.wantWarn != "" {
					assert.Regexp(t, in.wantWarn, stderr.String())
				}
			})
		}
	}
}

func hostileReportInputs() []hostileReportInput {
	return []hostileReportInput{
		{name: "one_span.pb", maxRSSMiB: 128, write: func(t *testing.T, p string) {
			writeDelimited(t, p, engineSpans(1, func(int) string { return "m" }, 0.1))
		}},
		{name: "identical.pb", maxRSSMiB: 128, write: func(t *testing.T, p string) {
			writeDelimited(t, p, engineSpans(50, func(int) string { return "m" }, 0.1))
		}},
		{name: "all_nan.pb", maxRSSMiB: 128, write: func(t *testing.T, p string) {
			writeDelimited(t, p, engineSpans(50, func(int) string { return "m" }, math.NaN()))
		}},
		{name: "first_record_17MiB.pb", maxRSSMiB: 128, write: writeBigFirstRecord},
		{name: "truncated.pb", maxRSSMiB: 128, wantWarn: `truncated: OTLP protobuf message 10 is cut short .*; the 9 before it were read`,
			write: writeTruncated},
		{name: "empty_spans.pb.gz", maxRSSMiB: 640, write: func(t *testing.T, p string) {
			writeGzipLayers(t, p, emptySpansRequest(48<<20), 1, gzip.BestCompression)
		}},
		{name: "gzip_1000_layers.gz", maxRSSMiB: 128,
			wantErr: `.*gzip_1000_layers.gz: gzip nested more than 3 deep: raise --max-gzip-depth if that is meant`,
			write: func(t *testing.T, p string) {
				// Stored, not compressed: the depth is the attack. Each
				// layer rewrites all the ones inside it, so writing n
				// layers costs n² bytes: 20,000 (the attack as found,
				// refused at depth 4 like any) took minutes; 1,000 take
				// a few milliseconds.
				writeGzipLayers(t, p, requestBytes(t, engineSpans(1, func(int) string { return "m" }, 0.1)), 1000, gzip.NoCompression)
			}},
		{name: "json_700MB.json", maxRSSMiB: 512,
			wantErr: `.*json_700MB.json: OTLP/JSON document 1: document over 134217728 bytes: write it as protobuf or in smaller documents`,
			write:   writeHugeJSON},
		{name: "models_1M.pb", maxRSSMiB: 512, write: writeMillionModels},
	}
}

// engineSpans is n vLLM request spans of models model(i), each with TTFT
// ttft and an E2E of a second.
func engineSpans(n int, model func(int) string, ttft float64) ptrace.Traces {
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	spans.EnsureCapacity(n)
	for i := range n {
		s := spans.AppendEmpty()
		s.SetName("llm_request")
		s.SetTraceID(pcommon.TraceID{byte(i >> 24), byte(i >> 16), byte(i >> 8), byte(i), 1})
		s.SetSpanID(pcommon.SpanID{byte(i >> 24), byte(i >> 16), byte(i >> 8), byte(i), 1})
		s.SetStartTimestamp(1_767_225_600_000_000_000)
		s.SetEndTimestamp(1_767_225_601_000_000_000)
		a := s.Attributes()
		a.PutStr("gen_ai.request.model", model(i))
		a.PutDouble("gen_ai.latency.time_to_first_token", ttft)
		a.PutDouble("gen_ai.latency.e2e", 1)
		a.PutInt("gen_ai.usage.completion_tokens", 20)
	}
	return td
}

func requestBytes(t *testing.T, td ptrace.Traces) []byte {
	b, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	require.NoError(t, err)
	return b
}

// writeDelimited writes each request preceded by its 4-byte length, as
// llmslo capture and the file exporter's proto format do.
func writeDelimited(t *testing.T, path string, tds ...ptrace.Traces) {
	f, err := os.Create(path)
	require.NoError(t, err)
	w := bufio.NewWriter(f)
	for _, td := range tds {
		b := requestBytes(t, td)
		_, err = w.Write(binary.BigEndian.AppendUint32(nil, uint32(len(b))))
		require.NoError(t, err)
		_, err = w.Write(b)
		require.NoError(t, err)
	}
	require.NoError(t, w.Flush())
	require.NoError(t, f.Close())
}

// writeBigFirstRecord: a first request of 17.5 MiB (its length prefix
// starts 0x01, which format sniffing once took for garbage), then a small one.
func writeBigFirstRecord(t *testing.T, path string) {
	big := engineSpans(1000, func(int) string { return "m" }, 0.1)
	spans := big.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	prompt := strings.Repeat("p", 18<<10)
	for i := range spans.Len() {
		spans.At(i).Attributes().PutStr("gen_ai.prompt", prompt)
	}
	require.Greater(t, len(requestBytes(t, big)), 17<<20)
	writeDelimited(t, path, big, engineSpans(3, func(int) string { return "small" }, 0.2))
}

// writeTruncated: ten requests, the last cut in the middle, as a killed
// writer leaves them.
func writeTruncated(t *testing.T, path string) {
	var tds []ptrace.Traces
	for range 10 {
		tds = append(tds, engineSpans(100, func(i int) string { return fmt.Sprint("m", i%3) }, 0.1))
	}
	writeDelimited(t, path, tds...)
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.NoError(t, os.Truncate(path, st.Size()-int64(len(requestBytes(t, tds[9])))/2))
}

// emptySpansRequest is one export request of n empty spans, encoded by
// hand: 2 bytes a span, so gzip shrinks it a thousandfold.
func emptySpansRequest(n int) []byte {
	inner := bytes.Repeat([]byte{0x12, 0x00}, n) // ScopeSpans.spans, empty
	wrap := func(tag byte, b []byte) []byte {
		return append(binary.AppendUvarint([]byte{tag}, uint64(len(b))), b...)
	}
	return wrap(0x0a, wrap(0x12, wrap(0x12, inner))) // request.resource_spans.scope_spans
}

// writeGzipLayers writes b gzipped layers times over at level.
func writeGzipLayers(t *testing.T, path string, b []byte, layers, level int) {
	for range layers {
		var buf bytes.Buffer
		zw, err := gzip.NewWriterLevel(&buf, level)
		require.NoError(t, err)
		_, err = zw.Write(b)
		require.NoError(t, err)
		require.NoError(t, zw.Close())
		b = buf.Bytes()
	}
	require.NoError(t, os.WriteFile(path, b, 0o600))
}

// writeHugeJSON writes one OTLP/JSON document of 715 MB: one resource of
// one scope with 2.2 million spans.
func writeHugeJSON(t *testing.T, path string) {
	f, err := os.Create(path)
	require.NoError(t, err)
	w := bufio.NewWriterSize(f, 1<<20)
	_, _ = w.WriteString(`{"resourceSpans":[{"scopeSpans":[{"spans":[`)
	for i := range 2_200_000 {
		if i > 0 {
			_ = w.WriteByte(',')
		}
		fmt.Fprintf(w, `{"traceId":"%032x","spanId":"%016x","name":"llm_request","startTimeUnixNano":"1767225600000000000",`+
			`"endTimeUnixNano":"1767225601000000000","attributes":[{"key":"gen_ai.latency.time_to_first_token","value":{"doubleValue":0.1}},`+
			`{"key":"gen_ai.request.model","value":{"stringValue":"m"}}]}`, i+1, i+1)
	}
	_, _ = w.WriteString("]}]}]}\n")
	require.NoError(t, w.Flush())
	require.NoError(t, f.Close())
}

// writeMillionModels writes a million request spans, each of its own model,
// in requests of 10,000.
func writeMillionModels(t *testing.T, path string) {
	var tds []ptrace.Traces
	for r := range 100 {
		tds = append(tds, engineSpans(10_000, func(i int) string { return fmt.Sprintf("model-%07d", r*10_000+i) }, 0.1))
	}
	writeDelimited(t, path, tds...)
}

// TestCaptureDecodedSizeBomb: `llmslo capture` given the 96 KB gzip of
// empty spans (tens of millions of spans decoded) answers 413 and keeps
// its memory; before, it reached 7.2 GB for 96 s.
func TestCaptureDecodedSizeBomb(t *testing.T) {
	c := startKilledCapture(t, filepath.Join(t.TempDir(), "traces.pb"))
	var body bytes.Buffer
	zw := gzip.NewWriter(&body)
	_, err := zw.Write(emptySpansRequest(48 << 20))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	req, err := http.NewRequest(http.MethodPost, c.url, &body) //nolint:noctx // a test's client
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("Content-Encoding", "gzip")
	size := body.Len()
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	rss := peakRSSMiB(t, c.cmd.Process.Pid)
	t.Logf("%d bytes of gzip: %s, peak RSS %.0f MiB", size, resp.Status, rss)
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
	assert.Less(t, rss, 256.0)
	// It still takes a normal request.
	ok, err := c.post(killRequest(1, 0, 3))
	require.NoError(t, err)
	assert.True(t, ok)
}
