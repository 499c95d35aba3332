// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// maxMessage bounds one length-prefixed protobuf message (the collector's
// OTLP receivers take 20 MiB per request by default; this leaves room).
const maxMessage = 256 << 20

// Read streams every export request of one OTLP trace file to fn, one at a
// time, so memory holds one request, never the file. The format is found
// from the first bytes:
//
//   - gzip (1f 8b): decompressed transparently, then read as below;
//   - '{' (after whitespace): OTLP/JSON, one ExportTraceServiceRequest per
//     line as the collector's file exporter writes it, or any sequence of
//     JSON documents, pretty-printed or not;
//   - 0a: one binary ExportTraceServiceRequest (protobuf), e.g. a captured
//     OTLP/HTTP request body;
//   - 00: a stream of protobuf messages, each preceded by its length as a
//     4-byte big-endian integer (the file exporter's "proto" format and the
//     output of llmslo capture).
//
// counted, if not nil, is advanced by the bytes read from r (before
// decompression), for progress reports.
func Read(r io.Reader, counted *atomic.Int64, fn func(ptrace.Traces) error) error {
	if counted != nil {
		r = &countingReader{r: r, n: counted}
	}
	br := bufio.NewReaderSize(r, 1<<20)
	head, err := br.Peek(2)
	if len(head) == 0 {
		if err == io.EOF {
			return nil // an empty file holds no spans
		}
		return err
	}
	if len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return fmt.Errorf("gzip: %w", err)
		}
		defer zr.Close()
		return Read(zr, nil, fn)
	}
	peek, _ := br.Peek(4096)
	switch {
	case looksJSON(peek):
		return readJSON(br, fn)
	case peek[0] == 0x0a:
		return readProtoWhole(br, fn)
	case peek[0] == 0x00:
		return readProtoDelimited(br, fn)
	case len(bytes.TrimSpace(peek)) == 0 && len(peek) < 4096:
		return nil // only whitespace
	}
	return fmt.Errorf("unrecognized input (first byte %#02x): expected OTLP/JSON, OTLP protobuf or gzip", peek[0])
}

// looksJSON reports whether b starts, after whitespace, with '{' and then,
// after whitespace, '"' or '}'. A protobuf ExportTraceServiceRequest starts
// with 0x0a (a newline) and a length, then 0x0a or 0x12: never that.
func looksJSON(b []byte) bool {
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 || b[0] != '{' {
		return false
	}
	b = bytes.TrimLeft(b[1:], " \t\r\n")
	return len(b) == 0 || b[0] == '"' || b[0] == '}'
}

// ReadFile is Read on a named file, "-" meaning standard input.
func ReadFile(path string, counted *atomic.Int64, fn func(ptrace.Traces) error) error {
	if path == "-" {
		return Read(os.Stdin, counted, fn)
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return Read(f, counted, fn)
}

func readJSON(r io.Reader, fn func(ptrace.Traces) error) error {
	dec := json.NewDecoder(r)
	var um ptrace.JSONUnmarshaler
	for i := 1; ; i++ {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if err == io.EOF {
				return nil
			}
			return fmt.Errorf("OTLP/JSON document %d: %w", i, err)
		}
		td, err := um.UnmarshalTraces(raw)
		if err != nil {
			return fmt.Errorf("OTLP/JSON document %d: %w", i, err)
		}
		if err := fn(td); err != nil {
			return err
		}
	}
}

func readProtoWhole(r io.Reader, fn func(ptrace.Traces) error) error {
	buf, err := io.ReadAll(io.LimitReader(r, maxMessage+1))
	if err != nil {
		return err
	}
	if len(buf) > maxMessage {
		return fmt.Errorf("protobuf message over %d bytes: write it length-prefixed (llmslo capture does)", maxMessage)
	}
	var um ptrace.ProtoUnmarshaler
	td, err := um.UnmarshalTraces(buf)
	if err != nil {
		return fmt.Errorf("OTLP protobuf: %w", err)
	}
	return fn(td)
}

func readProtoDelimited(r io.Reader, fn func(ptrace.Traces) error) error {
	var um ptrace.ProtoUnmarshaler
	var size [4]byte
	var buf []byte
	for i := 1; ; i++ {
		if _, err := io.ReadFull(r, size[:]); err != nil {
			if err == io.EOF {
				return nil
			}
			return fmt.Errorf("OTLP protobuf message %d: length: %w", i, err)
		}
		n := binary.BigEndian.Uint32(size[:])
		if n > maxMessage {
			return fmt.Errorf("OTLP protobuf message %d: length %d over %d bytes: not a length-prefixed stream?", i, n, maxMessage)
		}
		if cap(buf) < int(n) {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		if _, err := io.ReadFull(r, buf); err != nil {
			return fmt.Errorf("OTLP protobuf message %d: %w", i, noEOF(err))
		}
		td, err := um.UnmarshalTraces(buf)
		if err != nil {
			return fmt.Errorf("OTLP protobuf message %d: %w", i, err)
		}
		if err := fn(td); err != nil {
			return err
		}
	}
}

func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// WriteDelimited appends td to w as one length-prefixed protobuf message,
// the format Read takes and the collector's file exporter writes.
func WriteDelimited(w io.Writer, td ptrace.Traces) error {
	var m ptrace.ProtoMarshaler
	b, err := m.MarshalTraces(td)
	if err != nil {
		return err
	}
	return WriteDelimitedBytes(w, b)
}

// WriteDelimitedBytes writes one already encoded ExportTraceServiceRequest.
func WriteDelimitedBytes(w io.Writer, msg []byte) error {
	var size [4]byte
	binary.BigEndian.PutUint32(size[:], uint32(len(msg)))
	if _, err := w.Write(size[:]); err != nil {
		return err
	}
	_, err := w.Write(msg)
	return err
}

type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}
