// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package otlpfile

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// Defaults of CaptureOptions.
const (
	DefaultMaxRequestBytes = 64 << 20
	DefaultMaxConcurrent   = 4
	DefaultReadTimeout     = 30 * time.Second
	// slotWait is how long a request waits for a free slot before it is
	// answered 503 (retryable), so a crowd of slow senders delays a
	// normal one by at most this long.
	slotWait = 5 * time.Second
	// A request takes a slot only once its body has sent slotPrefetch
	// bytes, or all of it: a sender trickling a few bytes holds none,
	// and a body that small is read before the slot at a cost of at most
	// this much per connection.
	slotPrefetch = 32 << 10
	// Holding a slot, the rest of the body must arrive at minBodyRate
	// bytes a second after slotGrace, or the request is answered 408 and
	// the slot freed: a slot costs a sender bandwidth, not just a
	// connection.
	minBodyRate = 32 << 10
	slotGrace   = 2 * time.Second
)

// CaptureOptions configure a Capture. Zero fields take the defaults.
type CaptureOptions struct {
	// MaxRequestBytes bounds one request after decompression (counted
	// while decompressing); past it the answer is 413. At most
	// MaxRecordBytes.
	MaxRequestBytes int64
	// MaxConcurrent bounds the requests read and decoded at once, so
	// memory stays near MaxConcurrent x MaxRequestBytes.
	MaxConcurrent int
	// ReadTimeout bounds reading one request, headers and body.
	ReadTimeout time.Duration
	// Warn, if not nil, gets write failures and the recovery after them.
	Warn func(string)
}

func (o CaptureOptions) withDefaults() (CaptureOptions, error) {
	if o.MaxRequestBytes <= 0 {
		o.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if o.MaxRequestBytes > MaxRecordBytes {
		return o, fmt.Errorf("max request bytes %d: at most %d (what llmslo report reads as one record)", o.MaxRequestBytes, MaxRecordBytes)
	}
	if o.MaxConcurrent <= 0 {
		o.MaxConcurrent = DefaultMaxConcurrent
	}
	if o.ReadTimeout <= 0 {
		o.ReadTimeout = DefaultReadTimeout
	}
	return o, nil
}

// Capture is a small OTLP/HTTP traces receiver that appends every export
// request it receives to a CaptureFile that Read takes: point a
// collector's otlp_http exporter at it (endpoint http://ADDR; the exporter
// posts protobuf to /v1/traces, gzip-compressed by default). Requests in
// OTLP/JSON are accepted too. A request is answered 200 only once it is in
// the file as a complete record; a write that fails is answered 503, which
// the exporter retries.
type Capture struct {
	opts     CaptureOptions
	file     *CaptureFile
	slots    chan struct{}
	srv      *http.Server
	ln       net.Listener
	inflight sync.WaitGroup
	spans    atomic.Int64
	reqs     atomic.Int64
	refusals refusals
}

// refusalLogEvery spaces the lines a run of failed writes logs.
const refusalLogEvery = time.Minute

// refusals follows a run of failed writes (a full disk), so that it logs
// one line when it starts, one a minute while it lasts, and one when
// writing works again, not a line per refused request.
type refusals struct {
	mu            sync.Mutex
	n             int // refused in this run
	since, logged time.Time
}

func (r *refusals) failed(err error, warn func(string)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	r.n++
	switch {
	case r.n == 1:
		r.since, r.logged = now, now
		warn(fmt.Sprintf("write failed, answering 503 until it works again: %v", err))
	case now.Sub(r.logged) >= refusalLogEvery:
		r.logged = now
		warn(fmt.Sprintf("writes still failing: %d requests answered 503 in %v: %v", r.n, now.Sub(r.since).Round(time.Second), err))
	}
}

func (r *refusals) worked(warn func(string)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n > 0 {
		warn(fmt.Sprintf("writing again: %d requests were answered 503 in %v", r.n, time.Since(r.since).Round(time.Second)))
		r.n = 0
	}
}

// NewCapture listens on addr and appends to file.
func NewCapture(addr string, file *CaptureFile, opts CaptureOptions) (*Capture, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	c := &Capture{opts: opts, file: file, ln: ln, slots: make(chan struct{}, opts.MaxConcurrent)}
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/traces", c.handle)
	c.srv = &http.Server{
		Handler: mux, ReadHeaderTimeout: min(10*time.Second, opts.ReadTimeout), ReadTimeout: opts.ReadTimeout,
		WriteTimeout: opts.ReadTimeout + 10*time.Second, IdleTimeout: 2 * time.Minute,
	}
	go func() { _ = c.srv.Serve(ln) }()
	return c, nil
}

// Addr is the listening address.
func (c *Capture) Addr() string { return c.ln.Addr().String() }

// Spans and Requests count what was written.
func (c *Capture) Spans() int64    { return c.spans.Load() }
func (c *Capture) Requests() int64 { return c.reqs.Load() }

// httpError is an answer other than 200.
type httpError struct {
	code int
	msg  string
}

func (c *Capture) handle(w http.ResponseWriter, r *http.Request) {
	c.inflight.Add(1)
	defer c.inflight.Done()
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	start := time.Now()
	head, err := io.ReadAll(io.LimitReader(r.Body, slotPrefetch))
	if err != nil {
		http.Error(w, "reading the request: "+err.Error(), http.StatusBadRequest)
		return
	}
	timer := time.NewTimer(slotWait)
	defer timer.Stop()
	select {
	case c.slots <- struct{}{}:
		defer func() { <-c.slots }()
	case <-timer.C:
		w.Header().Set("Retry-After", "1")
		http.Error(w, "busy: too many requests at once", http.StatusServiceUnavailable)
		return
	case <-r.Context().Done():
		return
	}
	isJSON := strings.HasPrefix(r.Header.Get("Content-Type"), "application/json")
	body := io.MultiReader(bytes.NewReader(head), c.paced(w, r.Body, start))
	if herr := c.receive(r, body, isJSON); herr != nil {
		if herr.code == http.StatusServiceUnavailable {
			w.Header().Set("Retry-After", "1")
		}
		http.Error(w, herr.msg, herr.code)
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

// paced is the rest of a body, read holding a slot: the time spent
// waiting for it (not decompressing or decoding it) must stay within
// slotGrace plus the time its bytes so far take at minBodyRate, and the
// whole within the read timeout from start.
func (c *Capture) paced(w http.ResponseWriter, body io.Reader, start time.Time) io.Reader {
	return &pacedBody{r: body, rc: http.NewResponseController(w), end: start.Add(c.opts.ReadTimeout)}
}

// errTooSlow is a body arriving below minBodyRate while holding a slot.
var errTooSlow = fmt.Errorf("request body arriving at less than %d bytes a second: send it faster, or in smaller requests", minBodyRate)

type pacedBody struct {
	r      io.Reader
	rc     *http.ResponseController
	end    time.Time
	got    int64
	waited time.Duration // blocked in Read
}

func (p *pacedBody) Read(b []byte) (int, error) {
	now := time.Now()
	due := now.Add(slotGrace + time.Duration(p.got)*time.Second/minBodyRate - p.waited)
	if due.After(p.end) {
		due = p.end
	}
	_ = p.rc.SetReadDeadline(due) // an error: the server's own deadline stays
	n, err := p.r.Read(b)
	p.waited += time.Since(now)
	p.got += int64(n)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return n, errTooSlow
	}
	return n, err
}

// receive reads, checks and writes one request.
func (c *Capture) receive(r *http.Request, raw io.Reader, isJSON bool) *httpError {
	buf, herr := c.body(r, raw)
	if herr != nil {
		return herr
	}
	rec, spans, err := encodeRecord(buf, isJSON, c.file.json)
	if IsBudget(err) {
		return &httpError{http.StatusRequestEntityTooLarge, err.Error()}
	}
	if err != nil {
		return &httpError{http.StatusBadRequest, err.Error()}
	}
	if err := c.file.Append(rec); err != nil {
		c.refusals.failed(err, c.warn)
		return &httpError{http.StatusServiceUnavailable, "capture file: " + err.Error()}
	}
	c.refusals.worked(c.warn)
	c.reqs.Add(1)
	c.spans.Add(int64(spans))
	return nil
}

// body reads the request body raw, decompressed, within MaxRequestBytes.
func (c *Capture) body(r *http.Request, raw io.Reader) ([]byte, *httpError) {
	limit := c.opts.MaxRequestBytes
	var body io.Reader = http.MaxBytesReader(nil, io.NopCloser(raw), limit+1)
	switch enc := r.Header.Get("Content-Encoding"); enc {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(body)
		if err != nil {
			return nil, &httpError{http.StatusBadRequest, "gzip: " + err.Error()}
		}
		defer zr.Close()
		body = zr
	default:
		return nil, &httpError{http.StatusUnsupportedMediaType, "unsupported Content-Encoding " + enc + ": use gzip or none"}
	}
	buf, err := io.ReadAll(io.LimitReader(body, limit+1))
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) || err == nil && int64(len(buf)) > limit {
		return nil, &httpError{http.StatusRequestEntityTooLarge, fmt.Sprintf("request over %d bytes (decoded): send smaller batches or raise --max-request-bytes", limit)}
	}
	if errors.Is(err, errTooSlow) {
		return nil, &httpError{http.StatusRequestTimeout, err.Error()}
	}
	if err != nil {
		return nil, &httpError{http.StatusBadRequest, "reading the request: " + err.Error()}
	}
	return buf, nil
}

// encodeRecord checks a request body and returns the record it is
// written as, and its spans. A protobuf body is checked piece by piece
// (see decodeProto) and, for a protobuf file, written as received.
func encodeRecord(body []byte, bodyJSON, fileJSON bool) ([]byte, int, error) {
	spans := 0
	if !bodyJSON {
		var rec []byte
		err := decodeProto(body, func(td ptrace.Traces) error {
			spans += td.SpanCount()
			if fileJSON {
				b, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
				rec = append(append(rec, b...), '\n')
				return err
			}
			return nil
		})
		if err != nil {
			return nil, 0, fmt.Errorf("OTLP protobuf: %w", err)
		}
		if !fileJSON {
			rec = AppendDelimited(nil, body)
		}
		return rec, spans, nil
	}
	if n := bytes.Count(body, []byte("{")); n > MaxJSONObjects {
		return nil, 0, fmt.Errorf("OTLP/JSON request of %d objects, over %d: send smaller batches or protobuf", n, MaxJSONObjects)
	}
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(body)
	if err != nil {
		return nil, 0, fmt.Errorf("OTLP/JSON: %w", err)
	}
	if fileJSON {
		b, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
		return append(b, '\n'), td.SpanCount(), err
	}
	b, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	return AppendDelimited(nil, b), td.SpanCount(), err
}

func (c *Capture) warn(s string) {
	if c.opts.Warn != nil {
		c.opts.Warn(s)
	}
}

// Close stops receiving: it waits up to ctx for the requests in flight,
// then drops the connections still open (their requests were not
// answered, so the sender still holds them) and waits for their handlers,
// so nothing writes to the file once Close returns. The file is left open
// for its owner to close.
func (c *Capture) Close(ctx context.Context) error {
	err := c.srv.Shutdown(ctx)
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		_ = c.srv.Close()
		c.warn(fmt.Sprintf("stopped waiting for requests in flight (%v): they were not acknowledged", err))
	}
	c.inflight.Wait()
	return nil
}
