// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmslo/llmslo/tools/internal/otlpfile"
)

// engineSpans are vLLM llm_request spans: timing attributes, no events;
// each batch of a thousand comes from one of four replicas
// (service.instance.id), so the report's capacity sweep has work to do.
func engineSpans(n, offset int) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "vllm")
	rs.Resource().Attributes().PutStr("service.instance.id", fmt.Sprintf("vllm-%d", offset/1000%4))
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	for i := range n {
		id := uint64(offset + i + 1)
		s := spans.AppendEmpty()
		s.SetName("llm_request")
		var tid [16]byte
		var sid [8]byte
		binary.BigEndian.PutUint64(tid[8:], id)
		binary.BigEndian.PutUint64(sid[:], id)
		s.SetTraceID(tid)
		s.SetSpanID(sid)
		start := base + int64(id)*msec
		s.SetStartTimestamp(pcommon.Timestamp(start))
		s.SetEndTimestamp(pcommon.Timestamp(start + 900*msec))
		a := s.Attributes()
		a.PutStr("gen_ai.response.model", []string{"llama-3.1-8b", "qwen2.5-1.5b"}[i%2])
		a.PutDouble("gen_ai.latency.time_to_first_token", 0.1+float64(i%97)/1000)
		a.PutDouble("gen_ai.latency.e2e", 0.9+float64(i%89)/1000)
		a.PutDouble("gen_ai.latency.time_in_queue", float64(i%13)/1000)
		a.PutInt("gen_ai.usage.input_tokens", 512)
		a.PutInt("gen_ai.usage.output_tokens", 100+int64(i%50))
	}
	return td
}

// chunkSpans are client spans with 20 chunk events each.
func chunkSpans(n, offset int) ptrace.Traces {
	td := ptrace.NewTraces()
	for i := range n {
		var evs []ev
		for c := range 20 {
			evs = append(evs, ev{int64(100+c*8+i%5) * msec, 1})
		}
		chat(td, req{id: uint64(offset + i + 1), start: int64(offset+i) * msec, n: 20, end: 300 * msec, events: evs})
	}
	return td
}

// protoFile is a length-prefixed protobuf file of total spans in messages
// of 1,000 (the collector's batch size order).
func protoFile(b *testing.B, gen func(n, offset int) ptrace.Traces, total int) []byte {
	var buf bytes.Buffer
	for off := 0; off < total; off += 1000 {
		if err := otlpfile.WriteDelimited(&buf, gen(1000, off)); err != nil {
			b.Fatal(err)
		}
	}
	return buf.Bytes()
}

// reportInputs are the inputs of BenchmarkReport and
// BenchmarkReportShareNothing: 20,000 spans, and 200,000 as a day's file
// holds more; the larger heap of records makes the garbage collector's
// cycles rarer, and each cycle's fixed cost weighs more on two cores than
// on one.
var reportInputs = []struct {
	name  string
	gen   func(n, offset int) ptrace.Traces
	spans int
}{
	{"engine_spans", engineSpans, 20_000}, {"chunk_spans_20_events", chunkSpans, 20_000},
	{"engine_spans_200k", engineSpans, 200_000}, {"chunk_spans_20_events_200k", chunkSpans, 200_000},
}

// benchReports runs each input's file through run b.N times and reports
// spans/s, counting reports spans per run.
func benchReports(b *testing.B, reports int, run func(b *testing.B, opts Options, path string, spans int)) {
	for _, c := range reportInputs {
		b.Run(c.name, func(b *testing.B) {
			file := protoFile(b, c.gen, c.spans)
			path := filepath.Join(b.TempDir(), "spans.pb")
			if err := os.WriteFile(path, file, 0o600); err != nil {
				b.Fatal(err)
			}
			opts := goldenOptions(&testing.T{})
			b.SetBytes(int64(reports * len(file)))
			b.ResetTimer()
			for range b.N {
				run(b, opts, path, c.spans)
			}
			b.ReportMetric(float64(reports*c.spans)*float64(b.N)/b.Elapsed().Seconds(), "spans/s")
		})
	}
}

// runReport runs one report over path and checks that it read every span.
func runReport(b *testing.B, opts Options, path string, spans int) {
	r, err := Run(context.Background(), opts, Inputs{Paths: []string{path}}, nil, 0)
	if err != nil {
		b.Error(err)
		return
	}
	if r.Requests != int64(spans) {
		b.Errorf("%d requests", r.Requests)
	}
}

// BenchmarkReport measures the whole path from an OTLP protobuf file, as
// llmslo report runs it: read, decode, the llm_slo processor, the record,
// and the report at the end, on as many workers as -cpu gives it cores
// (-cpu 1,2 shows what a second core adds).
func BenchmarkReport(b *testing.B) {
	benchReports(b, 1, runReport)
}

// BenchmarkReportShareNothing is BenchmarkReport's ceiling on the same
// machine: one independent one-core report per core (-cpu), all at once,
// in one process. They share no work and wait on nothing, so what a second
// core adds here is what the machine gives one process's decoding,
// processing and collecting, whatever the report's own parallel design.
func BenchmarkReportShareNothing(b *testing.B) {
	cores := runtime.GOMAXPROCS(0)
	benchReports(b, cores, func(b *testing.B, opts Options, path string, spans int) {
		opts.Workers = 1
		var wg sync.WaitGroup
		for range cores {
			wg.Go(func() { runReport(b, opts, path, spans) })
		}
		wg.Wait()
	})
}

// BenchmarkMemoryPerRequest measures the heap kept per request after
// ingesting engine spans (the record and verdicts only) and client spans
// with 20 chunk events (plus the stream record and 19 gaps, pooled twice:
// the tools' pool and llmslo's): the figures behind the
// 10-million-request estimate of docs/report.md (Scale).
func BenchmarkMemoryPerRequest(b *testing.B) {
	for _, c := range []struct {
		name string
		gen  func(n, offset int) ptrace.Traces
		n    int
	}{{"engine_spans", engineSpans, 200_000}, {"chunk_spans_20_events", chunkSpans, 50_000}} {
		b.Run(c.name, func(b *testing.B) {
			batches := make([]ptrace.Traces, 0, c.n/1000)
			for off := 0; off < c.n; off += 1000 {
				batches = append(batches, c.gen(1000, off))
			}
			opts := goldenOptions(&testing.T{})
			for range b.N {
				runtime.GC()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				e, err := NewEngine(context.Background(), opts)
				if err != nil {
					b.Fatal(err)
				}
				for _, td := range batches {
					cp := ptrace.NewTraces()
					td.CopyTo(cp)
					if err := e.Consume(context.Background(), cp); err != nil {
						b.Fatal(err)
					}
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(c.n), "B/request")
				runtime.KeepAlive(e)
				_ = e.Close(context.Background())
			}
			b.ReportMetric(float64(recordSize), "B/record")
		})
	}
}

// BenchmarkCapacity measures the capacity alone (capacity.go: the sweep
// over every start and end, the levels per SLO and group) on 200,000
// engine spans of four replicas, the part of BenchmarkReport's
// engine_spans_200k the capacity adds after the inputs are read.
func BenchmarkCapacity(b *testing.B) {
	e, err := NewEngine(context.Background(), goldenOptions(&testing.T{}))
	if err != nil {
		b.Fatal(err)
	}
	for off := 0; off < 200_000; off += 1000 {
		if err := e.Consume(context.Background(), engineSpans(1000, off)); err != nil {
			b.Fatal(err)
		}
	}
	if err := e.Close(context.Background()); err != nil {
		b.Fatal(err)
	}
	order := e.groupOrder()
	b.ResetTimer()
	for b.Loop() {
		if c := e.capacity(order); len(c) != 2 {
			b.Fatalf("%d capacities", len(c))
		}
	}
}
