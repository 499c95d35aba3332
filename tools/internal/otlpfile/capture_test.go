// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package otlpfile

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// post sends td as the collector's otlphttp exporter does (protobuf,
// gzip-compressed, its default) and requires a 200.
func post(t *testing.T, addr string, td ptrace.Traces) {
	require.Equal(t, http.StatusOK, postStatus(t, addr, td))
}

// postStatus posts td as protobuf, gzip-compressed, and returns the status.
func postStatus(t *testing.T, addr string, td ptrace.Traces) int {
	body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	require.NoError(t, err)
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	_, _ = zw.Write(body)
	require.NoError(t, zw.Close())
	hr, err := http.NewRequest(http.MethodPost, "http://"+addr+"/v1/traces", &zb)
	require.NoError(t, err)
	hr.Header.Set("Content-Type", "application/x-protobuf")
	hr.Header.Set("Content-Encoding", "gzip")
	resp, err := http.DefaultClient.Do(hr)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	return resp.StatusCode
}

// oneSpan is a request of one chat span, told apart by id.
func oneSpan(id byte) ptrace.Traces {
	td := ptrace.NewTraces()
	s := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	s.SetName("chat llama")
	s.SetTraceID(pcommon.TraceID{0xf0, 15: id})
	s.SetSpanID(pcommon.SpanID{0xa0, 7: id})
	s.SetStartTimestamp(1_767_225_600_000_000_000)
	s.SetEndTimestamp(1_767_225_600_202_000_000)
	s.Attributes().PutStr("gen_ai.request.model", "llama")
	return td
}

// spansIn reads a capture file as llmslo report does and counts its spans.
func spansIn(t *testing.T, path string) int {
	n := 0
	require.NoError(t, ReadFile(path, nil, func(td ptrace.Traces) error { n += td.SpanCount(); return nil }))
	return n
}

// TestCaptureAppendsAndCutsPartialRecords: a restarted capture appends to
// the file it finds; a partial last record (a capture killed inside a
// write, never acknowledged) is cut off, the complete ones kept.
func TestCaptureAppendsAndCutsPartialRecords(t *testing.T) {
	for _, name := range []string{"traces.pb", "traces.pb.gz"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), name)
			for run := 1; run <= 3; run++ {
				file, note, err := OpenCaptureFile(path, false, false)
				require.NoError(t, err)
				if run == 3 {
					assert.Contains(t, note, "cut", "the partial record left by run 2")
				}
				c, err := NewCapture("127.0.0.1:0", file, CaptureOptions{})
				require.NoError(t, err)
				post(t, c.Addr(), oneSpan(1))
				post(t, c.Addr(), oneSpan(3))
				require.NoError(t, c.Close(context.Background()))
				require.NoError(t, file.Close())
				assert.Equal(t, 2*run, spansIn(t, path), "run %d appended", run)
				if run == 2 { // killed inside a third write
					f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
					require.NoError(t, err)
					partial := []byte{0x00, 0x00, 0x10, 0x00, 0x0a, 0x01} // a length prefix and 2 of 4,096 bytes
					if strings.HasSuffix(name, ".gz") {
						var zb bytes.Buffer
						zw := gzip.NewWriter(&zb)
						_, _ = zw.Write(bytes.Repeat(partial, 100))
						require.NoError(t, zw.Close())
						partial = zb.Bytes()[:20] // the start of a member
					}
					_, err = f.Write(partial)
					require.NoError(t, err)
					require.NoError(t, f.Close())
				}
			}
			assert.Equal(t, 6, spansIn(t, path))
		})
	}
}

// failingFile fails its writes while full is set, after writing half of
// what it is given, as a filling disk does.
type failingFile struct {
	bytes.Buffer
	full bool
}

func (f *failingFile) Write(p []byte) (int, error) {
	if f.full {
		n, _ := f.Buffer.Write(p[:len(p)/2])
		return n, errors.New("no space left on device")
	}
	return f.Buffer.Write(p)
}
func (f *failingFile) Truncate(n int64) error { f.Buffer.Truncate(int(n)); return nil }
func (*failingFile) Sync() error              { return nil }
func (*failingFile) Close() error             { return nil }

// TestCaptureDiskFull: a write that fails is answered 503 (the exporter
// retries it), leaves no partial record, and the capture recovers when
// space returns.
//
// A run of refused writes logs one line when it starts and one when it
// ends, not one per request (before: a warning per refused request).
func TestCaptureDiskFull(t *testing.T) {
	for _, gz := range []bool{false, true} {
		ff := &failingFile{}
		var mu sync.Mutex
		var warned []string
		c, err := NewCapture("127.0.0.1:0", NewCaptureFile(ff, 0, gz, false, false), CaptureOptions{
			Warn: func(s string) { mu.Lock(); warned = append(warned, s); mu.Unlock() },
		})
		require.NoError(t, err)
		post(t, c.Addr(), oneSpan(1))
		good := ff.Len()
		ff.full = true
		for range 20 {
			assert.Equal(t, http.StatusServiceUnavailable, postStatus(t, c.Addr(), oneSpan(3)))
		}
		assert.Equal(t, good, ff.Len(), "no partial record")
		ff.full = false
		post(t, c.Addr(), oneSpan(3))
		mu.Lock()
		require.Len(t, warned, 2)
		assert.Equal(t, "write failed, answering 503 until it works again: no space left on device", warned[0])
		assert.Regexp(t, `^writing again: 20 requests were answered 503 in \d+s$`, warned[1])
		mu.Unlock()
		require.NoError(t, c.Close(context.Background()))
		n := 0
		require.NoError(t, Read(bytes.NewReader(ff.Bytes()), nil, func(td ptrace.Traces) error { n += td.SpanCount(); return nil }))
		assert.Equal(t, 2, n, "gzip %v", gz)
	}
}

// TestCaptureRequestLimit: a request over --max-request-bytes once
// decoded is answered 413, however small it was compressed.
func TestCaptureRequestLimit(t *testing.T) {
	c, err := NewCapture("127.0.0.1:0", NewCaptureFile(&failingFile{}, 0, false, false, false), CaptureOptions{MaxRequestBytes: 1 << 10})
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close(context.Background())) }()
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	for range 1000 {
		spans.AppendEmpty() // empty spans compress to almost nothing
	}
	assert.Equal(t, http.StatusRequestEntityTooLarge, postStatus(t, c.Addr(), td))
}

func TestReadFormats(t *testing.T) {
	td := oneSpan(1)
	var js, pb, delim, gz bytes.Buffer
	b, _ := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	js.Write(b)
	js.WriteString("\n")
	js.Write(b) // two documents, one per line
	p, _ := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	pb.Write(p)
	require.NoError(t, WriteDelimited(&delim, td))
	require.NoError(t, WriteDelimited(&delim, td))
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(delim.Bytes())
	require.NoError(t, zw.Close())
	pretty := bytes.ReplaceAll(b, []byte(","), []byte(",\n  "))
	for name, c := range map[string]struct {
		in    []byte
		spans int
	}{
		"json lines": {js.Bytes(), 2}, "pretty json": {append([]byte("\n  "), pretty...), 1},
		"protobuf": {pb.Bytes(), 1}, "delimited": {delim.Bytes(), 2}, "gzip": {gz.Bytes(), 2}, "empty": {nil, 0},
	} {
		n := 0
		err := Read(bytes.NewReader(c.in), nil, func(td ptrace.Traces) error { n += td.SpanCount(); return nil })
		require.NoError(t, err, name)
		assert.Equal(t, c.spans, n, name)
	}
	for name, in := range map[string][]byte{
		"garbage": []byte("hello"), "truncated": delim.Bytes()[:10], "bad json": []byte(`{"resourceSpans": [}`),
	} {
		err := Read(bytes.NewReader(in), nil, func(ptrace.Traces) error { return nil })
		assert.Error(t, err, name)
	}
}
