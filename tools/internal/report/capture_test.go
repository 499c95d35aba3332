// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"bytes"
	"compress/gzip"
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/llmslo/llmslo/tools/internal/otlpfile"
	"github.com/llmslo/llmslo/tools/internal/report/schema"
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

// spansIn reads a capture file as llmslo report does and counts its spans.
func spansIn(t *testing.T, path string) int {
	n := 0
	require.NoError(t, otlpfile.ReadFile(path, nil, func(td ptrace.Traces) error { n += td.SpanCount(); return nil }))
	return n
}

// TestCaptureThenReport: what llmslo capture writes, in each of its
// formats, reads back into the report with the values sent.
func TestCaptureThenReport(t *testing.T) {
	for _, name := range []string{"traces.pb", "traces.pb.gz", "traces.jsonl"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), name)
			file, _, err := otlpfile.OpenCaptureFile(path, strings.HasSuffix(name, ".jsonl"), false)
			require.NoError(t, err)
			c, err := otlpfile.NewCapture("127.0.0.1:0", file, otlpfile.CaptureOptions{})
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
			require.NoError(t, otlpfile.ReadFile(path, nil, func(td ptrace.Traces) error {
				return e.Consume(context.Background(), td)
			}))
			require.NoError(t, e.Close(context.Background()))
			r := e.Report(nil)
			assert.Equal(t, int64(2), r.Requests)
			// V1 and V3 together: llmslo TTFT 100 ms for both, TPOT 25 and 12.5 ms.
			ttft := r.Latency[0].Metrics["ttft"]
			assert.Equal(t, schema.Num(0.1), ttft.P50)
			assert.InEpsilon(t, (0.025+0.0125)/2, float64(r.Latency[0].Metrics["tpot"].Mean), 1e-12)
		})
	}
}
