// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"bytes"
	"compress/gzip"
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// post sends td as the collector's otlphttp exporter does: protobuf,
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

func TestCaptureThenReport(t *testing.T) {
	for _, asJSONFile := range []bool{false, true} {
		var file bytes.Buffer
		c, err := NewCapture("127.0.0.1:0", &file, asJSONFile)
		require.NoError(t, err)
		vs := vectors()
		post(t, c.Addr(), vs["v1"], false)
		post(t, c.Addr(), vs["v3"], true)
		require.NoError(t, c.Close(context.Background()))
		assert.Equal(t, int64(2), c.Requests())
		assert.Equal(t, int64(2), c.Spans())

		e, err := NewEngine(context.Background(), goldenOptions(t))
		require.NoError(t, err)
		require.NoError(t, Read(bytes.NewReader(file.Bytes()), nil, func(td ptrace.Traces) error {
			return e.Consume(context.Background(), td)
		}))
		require.NoError(t, e.Close(context.Background()))
		r := e.Report(nil)
		assert.Equal(t, int64(2), r.Requests)
		// V1 and V3 together: llmslo TTFT 100 ms for both, TPOT 25 and 12.5 ms.
		ttft := r.Latency[0].Metrics["ttft"]
		assert.Equal(t, Num(0.1), ttft.P50)
		assert.InEpsilon(t, (0.025+0.0125)/2, float64(r.Latency[0].Metrics["tpot"].Mean), 1e-12)
	}
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
