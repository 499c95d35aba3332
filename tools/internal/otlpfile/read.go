// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

// Package otlpfile reads and writes OTLP trace files: it streams every
// export request of a file in any format the collector's exporters write
// (OTLP/JSON, protobuf whole or length-prefixed, gzip), within bounds a
// hostile file cannot stretch, and it receives what a collector exports
// over OTLP/HTTP into such a file (llmslo capture). Reading and writing
// share one package because they share the record formats and the checks
// that tell them apart.
package otlpfile

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// MaxRecordBytes bounds one protobuf message or JSON document of an input
// (and one request of llmslo capture). It stays below 0x0a000000 bytes,
// so a length prefix never starts with the byte a whole protobuf request
// starts with (0x0a) and the two formats cannot be mistaken.
const MaxRecordBytes = 128 << 20

// Defaults of ReadLimits.
const (
	DefaultMaxDecodedBytes = 16 << 30
	DefaultMaxGzipDepth    = 3
)

// ReadLimits bound the work of reading inputs. The zero value takes the
// defaults.
type ReadLimits struct {
	// MaxDecodedBytes bounds the bytes read after decompression, every
	// gzip layer counted, over all inputs of a run: a gzip bomb (1 KB of
	// gzip holds 1 MB of zeros) stops with an error instead of running for
	// minutes.
	MaxDecodedBytes int64
	// MaxGzipDepth bounds gzip inside gzip.
	MaxGzipDepth int
}

func (l ReadLimits) withDefaults() ReadLimits {
	if l.MaxDecodedBytes <= 0 {
		l.MaxDecodedBytes = DefaultMaxDecodedBytes
	}
	if l.MaxGzipDepth <= 0 {
		l.MaxGzipDepth = DefaultMaxGzipDepth
	}
	return l
}

// TruncatedError is an input whose last record is cut short, as a killed
// capture or an interrupted copy leaves it: every record before it was
// read. Callers report it as a warning.
type TruncatedError struct {
	What string // "OTLP protobuf message", "OTLP/JSON document"
	// Record is the cut record (1-based); the Record-1 before it were read.
	Record int
	Err    error
}

func (e *TruncatedError) Error() string {
	return fmt.Sprintf("truncated: %s %d is cut short (%v); the %d before it were read", e.What, e.Record, e.Err, e.Record-1)
}

func (e *TruncatedError) Unwrap() error { return e.Err }

// Reader reads OTLP trace files within its limits; the decoded bytes count
// over every file it reads.
type Reader struct {
	lim     ReadLimits
	decoded int64
	// Warn, if not nil, gets each record skipped, named, and the reading
	// goes on: a record that is malformed (ErrMalformed) or past the
	// budget of a piece (*BudgetError). Without it, such a record stops
	// the reading with its error.
	Warn func(string)
}

// skip is the error of a record or piece skipped: nil once warned.
func (rd *Reader) skip(where string, err error) error {
	if where != "" {
		err = fmt.Errorf("%s: %w", where, err)
	}
	if rd.Warn == nil {
		return err
	}
	rd.Warn(fmt.Sprintf("%v: skipped", err))
	return nil
}

// NewReader returns a Reader with lim (zero fields: the defaults).
func NewReader(lim ReadLimits) *Reader { return &Reader{lim: lim.withDefaults()} }

// Read is NewReader(ReadLimits{}).Read.
func Read(r io.Reader, counted *atomic.Int64, fn func(ptrace.Traces) error) error {
	return NewReader(ReadLimits{}).Read(r, counted, fn)
}

// Read streams every export request of one OTLP trace file to fn, one
// piece at a time, so memory holds one piece of one request, never the
// file (a request is cut into pieces of PieceBytes between its
// resources, scopes and spans, so even a request of empty spans decodes
// in bounded memory). The format is found from the first bytes:
//
//   - gzip (1f 8b): decompressed, then read as below;
//   - '{' (after whitespace): OTLP/JSON, one ExportTraceServiceRequest per
//     line as the collector's file exporter writes it, or any sequence of
//     JSON documents, pretty-printed or not;
//   - a 4-byte big-endian length that fits MaxRecordBytes followed by the
//     start of a request that fits that length: a stream of protobuf
//     messages each preceded by its length (the file exporter's "proto"
//     format and the output of llmslo capture);
//   - 0a and a length: one binary ExportTraceServiceRequest (protobuf),
//     e.g. a captured OTLP/HTTP request body.
//
// A cut last record returns a *TruncatedError after every record before it
// went to fn. counted, if not nil, is advanced by the bytes read from r
// (before decompression), for progress reports.
func (rd *Reader) Read(r io.Reader, counted *atomic.Int64, fn func(ptrace.Traces) error) error {
	return rd.ReadPieces(r, counted, rd.decoding(fn))
}

// ReadPieces is Read handing fn each piece undecoded where the format
// allows (protobuf), so that a caller decodes the pieces on several
// cores: see Piece.
func (rd *Reader) ReadPieces(r io.Reader, counted *atomic.Int64, fn func(Piece) error) error {
	if counted != nil {
		r = &countingReader{r: r, n: counted}
	}
	return rd.read(r, 0, fn)
}

func (rd *Reader) read(r io.Reader, depth int, fn func(Piece) error) error {
	br := bufio.NewReaderSize(r, 1<<20)
	peek, err := br.Peek(4096)
	if len(peek) == 0 {
		if err == io.EOF {
			return nil // an empty input holds no spans
		}
		return err
	}
	switch {
	case len(peek) >= 2 && peek[0] == 0x1f && peek[1] == 0x8b:
		return rd.readGzip(br, depth, fn)
	case looksJSON(peek):
		return rd.readJSON(br, fn)
	case looksDelimited(peek):
		return rd.readProtoDelimited(br, fn)
	case looksProto(peek):
		return rd.readProtoWhole(br, fn)
	case len(bytes.TrimSpace(peek)) == 0 && len(peek) < 4096:
		return nil // only whitespace
	}
	return fmt.Errorf("unrecognized input (starts % x): expected OTLP/JSON, OTLP protobuf (length-prefixed or one request) or gzip", peek[:min(len(peek), 8)])
}

func (rd *Reader) readGzip(r io.Reader, depth int, fn func(Piece) error) error {
	if depth >= rd.lim.MaxGzipDepth {
		return fmt.Errorf("gzip nested more than %d deep: raise --max-gzip-depth if that is meant", rd.lim.MaxGzipDepth)
	}
	zr, err := gzip.NewReader(r)
	if err != nil {
		return fmt.Errorf("gzip: %w", err)
	}
	defer zr.Close()
	return rd.read(&decodedLimit{r: zr, rd: rd}, depth+1, fn)
}

// ErrDecodedLimit is reading past ReadLimits.MaxDecodedBytes.
var ErrDecodedLimit = errors.New("decoded input over the limit")

// decodedLimit counts what a gzip layer yields against the limit.
type decodedLimit struct {
	r  io.Reader
	rd *Reader
}

func (d *decodedLimit) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	d.rd.decoded += int64(n)
	if d.rd.decoded > d.rd.lim.MaxDecodedBytes {
		return n, fmt.Errorf("%w: more than %d bytes after decompression: raise --max-decoded-bytes if the input is that large", ErrDecodedLimit, d.rd.lim.MaxDecodedBytes)
	}
	return n, err
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

// looksDelimited checks the first 4 bytes as a length against what
// follows: an empty message, or a request (0a, then the length of its
// first ResourceSpans) that fits in it. A cut file whose first message
// starts right passes, and then reads as truncated.
func looksDelimited(b []byte) bool {
	if len(b) < 4 {
		return false
	}
	n := binary.BigEndian.Uint32(b)
	if n > MaxRecordBytes {
		return false
	}
	if n == 0 {
		return true
	}
	if len(b) < 5 || b[4] != 0x0a {
		return false
	}
	l, k := binary.Uvarint(b[5:])
	if k == 0 { // the varint runs past the peeked bytes
		return len(b) == 4096
	}
	return k > 0 && l <= uint64(n)-1-uint64(k)
}

// looksProto checks the start of one ExportTraceServiceRequest: field 1
// (0a) and a length.
func looksProto(b []byte) bool {
	if b[0] != 0x0a {
		return false
	}
	_, k := binary.Uvarint(b[1:])
	return k > 0 || k == 0 && len(b) == 4096
}

// ReadFile is Read on a named file, "-" meaning standard input.
func ReadFile(path string, counted *atomic.Int64, fn func(ptrace.Traces) error) error {
	return NewReader(ReadLimits{}).ReadFile(path, counted, fn)
}

// ReadFile is Read on a named file, "-" meaning standard input.
func (rd *Reader) ReadFile(path string, counted *atomic.Int64, fn func(ptrace.Traces) error) error {
	return rd.ReadFilePieces(path, counted, rd.decoding(fn))
}

// ReadFilePieces is ReadPieces on a named file, "-" meaning standard input.
func (rd *Reader) ReadFilePieces(path string, counted *atomic.Int64, fn func(Piece) error) error {
	if path == "-" {
		return rd.ReadPieces(os.Stdin, counted, fn)
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return rd.ReadPieces(f, counted, fn)
}
