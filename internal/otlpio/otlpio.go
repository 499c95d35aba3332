// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

// Package otlpio sends traces to a collector over OTLP/gRPC and receives
// what a collector exports over OTLP/HTTP, for the demo tools and the
// end-to-end tests. It uses only pdata's OTLP codecs: no SDK, so the spans
// arrive exactly as written.
package otlpio

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// Sender sends traces to an OTLP/gRPC endpoint.
type Sender struct {
	conn   *grpc.ClientConn
	client ptraceotlp.GRPCClient
}

// NewSender connects (lazily) to endpoint, e.g. "127.0.0.1:4317".
func NewSender(endpoint string) (*Sender, error) {
	conn, err := grpc.NewClient(endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", endpoint, err)
	}
	return &Sender{conn: conn, client: ptraceotlp.NewGRPCClient(conn)}, nil
}

// Send exports td, retrying while the collector is still starting.
func (s *Sender) Send(ctx context.Context, td ptrace.Traces) error {
	for {
		_, err := s.client.Export(ctx, ptraceotlp.NewExportRequestFromTraces(td))
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("export %d spans: %w (last error: %w)", td.SpanCount(), ctx.Err(), err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Close closes the connection.
func (s *Sender) Close() error { return s.conn.Close() }

// Receiver is an OTLP/HTTP endpoint (protobuf) that keeps what it receives.
type Receiver struct {
	srv *http.Server
	ln  net.Listener

	mu      sync.Mutex
	traces  []ptrace.Traces
	metrics []pmetric.Metrics
	changed chan struct{}
}

// NewReceiver listens on addr ("127.0.0.1:0" picks a free port).
func NewReceiver(addr string) (*Receiver, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	r := &Receiver{ln: ln, changed: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/traces", func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		er := ptraceotlp.NewExportRequest()
		if err == nil {
			err = er.UnmarshalProto(body)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.add(func() { r.traces = append(r.traces, er.Traces()) })
		reply(w, ptraceotlp.NewExportResponse().MarshalProto)
	})
	mux.HandleFunc("/v1/metrics", func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		er := pmetricotlp.NewExportRequest()
		if err == nil {
			err = er.UnmarshalProto(body)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.add(func() { r.metrics = append(r.metrics, er.Metrics()) })
		reply(w, pmetricotlp.NewExportResponse().MarshalProto)
	})
	r.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = r.srv.Serve(ln) }()
	return r, nil
}

func reply(w http.ResponseWriter, marshal func() ([]byte, error)) {
	b, _ := marshal()
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(b)
}

func (r *Receiver) add(f func()) {
	r.mu.Lock()
	f()
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
}

// Addr is the address the receiver listens on.
func (r *Receiver) Addr() string { return r.ln.Addr().String() }

// Traces returns every batch received so far.
func (r *Receiver) Traces() []ptrace.Traces {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]ptrace.Traces(nil), r.traces...)
}

// Metrics returns every metrics batch received so far.
func (r *Receiver) Metrics() []pmetric.Metrics {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]pmetric.Metrics(nil), r.metrics...)
}

// SpanCount is the number of spans received so far.
func (r *Receiver) SpanCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, td := range r.traces {
		n += td.SpanCount()
	}
	return n
}

// WaitSpans waits until at least n spans have arrived.
func (r *Receiver) WaitSpans(ctx context.Context, n int) error {
	for {
		r.mu.Lock()
		ch := r.changed
		r.mu.Unlock()
		if got := r.SpanCount(); got >= n {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("received %d of %d spans: %w", r.SpanCount(), n, ctx.Err())
		case <-ch:
		}
	}
}

// Close stops the receiver.
func (r *Receiver) Close() error { return r.srv.Close() }

// Spans calls fn for every span of every batch in td.
func Spans(td ptrace.Traces, fn func(resource ptrace.ResourceSpans, span ptrace.Span)) {
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				fn(rss.At(i), spans.At(k))
			}
		}
	}
}
