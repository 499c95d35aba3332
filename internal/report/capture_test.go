// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// post sends td as the collector's otlp_http exporter does: protobuf,
// gzip-compressed (its default), or OTLP/JSON.
func post(t *testing.T, addr string, td ptrace.Traces, asJSON bool) {
	req := ptraceotlp.NewExportRequestFromTraces(td)
	var body []byte
	var err error
	ctype := "application/x-protobuf"
	if asJSON {
		body, err = req.MarshalJSON()
		ctype = "application/json"
	} else {
		body, err = req.MarshalProto()
	}
	require.NoError(t, err)
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	_, _ = zw.Write(body)
	require.NoError(t, zw.Close())
	hr, err := http.NewRequest(http.MethodPost, "http://"+addr+"/v1/traces", &zb)
	require.NoError(t, err)
	hr.Header.Set("Content-Type", ctype)
	hr.Header.Set("Content-Encoding", "gzip")
	resp, err := http.DefaultClient.Do(hr)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.NoError(t, resp.Body.Close())
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

// spansIn reads a capture file as llmslo report does and counts its spans.
func spansIn(t *testing.T, path string) int {
	n := 0
	require.NoError(t, ReadFile(path, nil, func(td ptrace.Traces) error { n += td.SpanCount(); return nil }))
	return n
}

func TestCaptureThenReport(t *testing.T) {
	for _, name := range []string{"traces.pb", "traces.pb.gz", "traces.jsonl"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), name)
			file, _, err := OpenCaptureFile(path, strings.HasSuffix(name, ".jsonl"), false)
			require.NoError(t, err)
			c, err := NewCapture("127.0.0.1:0", file, CaptureOptions{})
			require.NoError(t, err)
			vs := vectors()
			post(t, c.Addr(), vs["v1"], false)
			// Acknowledged means on disk, whole: readable before Close.
			assert.Equal(t, 1, spansIn(t, path))
			post(t, c.Addr(), vs["v3"], true)
			require.NoError(t, c.Close(context.Background()))
			require.NoError(t, file.Close())
			assert.Equal(t, int64(2), c.Requests())
			assert.Equal(t, int64(2), c.Spans())

			e, err := NewEngine(context.Background(), goldenOptions(t))
			require.NoError(t, err)
			require.NoError(t, ReadFile(path, nil, func(td ptrace.Traces) error {
				return e.Consume(context.Background(), td)
			}))
			require.NoError(t, e.Close(context.Background()))
			r := e.Report(nil)
			assert.Equal(t, int64(2), r.Requests)
			// V1 and V3 together: llmslo TTFT 100 ms for both, TPOT 25 and 12.5 ms.
			ttft := r.Latency[0].Metrics["ttft"]
			assert.Equal(t, Num(0.1), ttft.P50)
			assert.InEpsilon(t, (0.025+0.0125)/2, float64(r.Latency[0].Metrics["tpot"].Mean), 1e-12)
		})
	}
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
				post(t, c.Addr(), vectors()["v1"], false)
				post(t, c.Addr(), vectors()["v3"], false)
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
func TestCaptureDiskFull(t *testing.T) {
	for _, gz := range []bool{false, true} {
		ff := &failingFile{}
		c, err := NewCapture("127.0.0.1:0", NewCaptureFile(ff, 0, gz, false, false), CaptureOptions{})
		require.NoError(t, err)
		post(t, c.Addr(), vectors()["v1"], false)
		good := ff.Len()
		ff.full = true
		assert.Equal(t, http.StatusServiceUnavailable, postStatus(t, c.Addr(), vectors()["v3"]))
		assert.Equal(t, good, ff.Len(), "no partial record")
		ff.full = false
		post(t, c.Addr(), vectors()["v3"], false)
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
	td := vectors()["v1"]
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
