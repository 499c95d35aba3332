// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// Capture is a small OTLP/HTTP traces receiver that appends every export
// request it receives to a file that Read takes: point a collector's
// otlphttp exporter at it (endpoint http://ADDR; the exporter posts
// protobuf to /v1/traces, gzip-compressed by default). Requests in
// OTLP/JSON are accepted too. The file is length-prefixed protobuf, or
// OTLP/JSON lines when JSON is set; gzip when the writer wants it.
type Capture struct {
	JSON bool

	mu    sync.Mutex
	w     *bufio.Writer
	srv   *http.Server
	ln    net.Listener
	spans atomic.Int64
	reqs  atomic.Int64
	err   error
}

// maxBody bounds one request body (decompressed).
const maxBody = 64 << 20

// NewCapture listens on addr and writes to w.
func NewCapture(addr string, w io.Writer, json bool) (*Capture, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	c := &Capture{JSON: json, w: bufio.NewWriterSize(w, 1<<20), ln: ln}
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/traces", c.handle)
	c.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = c.srv.Serve(ln) }()
	return c, nil
}

// Addr is the listening address.
func (c *Capture) Addr() string { return c.ln.Addr().String() }

// Spans and Requests count what was written.
func (c *Capture) Spans() int64    { return c.spans.Load() }
func (c *Capture) Requests() int64 { return c.reqs.Load() }

func (c *Capture) handle(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	var body io.Reader = r.Body
	switch enc := r.Header.Get("Content-Encoding"); enc {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		defer zr.Close()
		body = zr
	default:
		http.Error(w, "unsupported Content-Encoding "+enc+": use gzip or none", http.StatusUnsupportedMediaType)
		return
	}
	buf, err := io.ReadAll(io.LimitReader(body, maxBody+1))
	if err == nil && len(buf) > maxBody {
		err = fmt.Errorf("request over %d bytes", maxBody)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req := ptraceotlp.NewExportRequest()
	isJSON := strings.HasPrefix(r.Header.Get("Content-Type"), "application/json")
	if isJSON {
		err = req.UnmarshalJSON(buf)
	} else {
		err = req.UnmarshalProto(buf)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if err := c.write(req.Traces(), buf, isJSON); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	resp := ptraceotlp.NewExportResponse()
	var out []byte
	if isJSON {
		out, _ = resp.MarshalJSON()
		w.Header().Set("Content-Type", "application/json")
	} else {
		out, _ = resp.MarshalProto()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}
	_, _ = w.Write(out)
}

func (c *Capture) write(td ptrace.Traces, raw []byte, rawJSON bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return c.err
	}
	var err error
	switch {
	case c.JSON:
		var b []byte
		if b, err = (&ptrace.JSONMarshaler{}).MarshalTraces(td); err == nil {
			if _, err = c.w.Write(b); err == nil {
				err = c.w.WriteByte('\n')
			}
		}
	case !rawJSON:
		err = WriteDelimitedBytes(c.w, raw) // the body as received
	default:
		err = WriteDelimited(c.w, td)
	}
	if err == nil {
		// Each request is flushed whole, so the file is readable while
		// the capture runs.
		err = c.w.Flush()
	}
	if err != nil {
		c.err = err
		return err
	}
	c.reqs.Add(1)
	c.spans.Add(int64(td.SpanCount()))
	return nil
}

// Close stops receiving (waiting up to ctx for requests in flight) and
// flushes the file.
func (c *Capture) Close(ctx context.Context) error {
	err := c.srv.Shutdown(ctx)
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if ferr := c.w.Flush(); err == nil {
		err = ferr
	}
	if err == nil {
		err = c.err
	}
	return err
}
