// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package otlpfile

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// MaxJSONObjects bounds the JSON objects of one OTLP/JSON document: pdata
// decodes a document whole, about 260 bytes per object for empty spans
// ({} on 2 bytes), so this keeps one document under about 1 GB.
const MaxJSONObjects = 4 << 20

func (rd *Reader) readJSON(r io.Reader, fn func(Piece) error) error {
	for i := 1; r != nil; {
		var err error
		if r, err = rd.readJSONDocs(r, &i, fn); err != nil {
			return err
		}
	}
	return nil
}

// readJSONDocs reads documents from r, counting them in *i, until the end
// (nil) or a document that is not JSON: then, once warned, it returns the
// input from the next document on (see resync).
func (rd *Reader) readJSONDocs(r io.Reader, i *int, fn func(Piece) error) (io.Reader, error) {
	lr := &docLimiter{r: r}
	dec := json.NewDecoder(lr)
	var um ptrace.JSONUnmarshaler
	for ; ; *i++ {
		lr.left = dec.InputOffset() + MaxRecordBytes - lr.read
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if err == io.EOF {
				return nil, nil
			}
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, &TruncatedError{What: "OTLP/JSON document", Record: *i, Err: err}
			}
			var syntax *json.SyntaxError
			if !errors.As(err, &syntax) || rd.Warn == nil {
				return nil, fmt.Errorf("OTLP/JSON document %d: %w", *i, err)
			}
			rd.Warn(fmt.Sprintf("OTLP/JSON document %d: %v: skipped, reading on from the next line that starts a document", *i, err))
			*i++
			return resync(io.MultiReader(dec.Buffered(), lr.r)), nil
		}
		where := fmt.Sprintf("OTLP/JSON document %d", *i)
		if n := bytes.Count(raw, []byte("{")); n > MaxJSONObjects {
			return nil, fmt.Errorf("%s: %d objects, over %d (decoded whole, it would take about %d MB): write it as protobuf or in smaller documents", where, n, MaxJSONObjects, n*260>>20)
		}
		td, err := um.UnmarshalTraces(raw)
		if err != nil {
			if err := rd.skip(where, err); err != nil {
				return nil, err
			}
			continue
		}
		if err := fn(Piece{td: td}); err != nil {
			return nil, err
		}
	}
}

// resync skips a document that is not JSON, as a line torn by a writer
// stopped inside it leaves one, from where it starts (r): to the next '{'
// that starts a line or a request (`{"resourceSpans"`, which no string
// holds unescaped), so the request written after the torn one is read.
func resync(r io.Reader) io.Reader {
	br := bufio.NewReaderSize(r, 64<<10)
	b, err := br.ReadByte()
	for err == nil && (b == ' ' || b == '\t' || b == '\r' || b == '\n') {
		b, err = br.ReadByte() // to the torn document's first byte
	}
	prev := b
	for err == nil {
		if b, err = br.ReadByte(); err != nil || b != '{' {
			prev = b
			continue
		}
		_ = br.UnreadByte()
		if p, _ := br.Peek(len(requestStart)); prev == '\n' || bytes.Equal(p, requestStart) {
			break
		}
		prev, _ = br.ReadByte()
	}
	return br
}

// requestStart is how an OTLP/JSON request starts as pdata writes it.
var requestStart = []byte(`{"resourceSpans"`)

// docLimiter stops a JSON document past MaxRecordBytes while it is read,
// before the decoder holds more of it.
type docLimiter struct {
	r          io.Reader
	read, left int64
}

func (d *docLimiter) Read(p []byte) (int, error) {
	if d.left <= 0 {
		return 0, fmt.Errorf("document over %d bytes: write it as protobuf or in smaller documents", MaxRecordBytes)
	}
	if int64(len(p)) > d.left {
		p = p[:d.left]
	}
	n, err := d.r.Read(p)
	d.read += int64(n)
	d.left -= int64(n)
	return n, err
}

func (rd *Reader) readProtoWhole(r io.Reader, fn func(Piece) error) error {
	buf, err := io.ReadAll(io.LimitReader(r, MaxRecordBytes+1))
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return &TruncatedError{What: "OTLP protobuf request", Record: 1, Err: err}
	}
	if err != nil {
		return err
	}
	if len(buf) > MaxRecordBytes {
		return fmt.Errorf("protobuf message over %d bytes: write it length-prefixed (llmslo capture does)", MaxRecordBytes)
	}
	return rd.splitRecord(buf, "OTLP protobuf", fn)
}

// splitRecord hands fn the pieces of one encoded request. A request past
// the budget of a piece, or malformed at a level SplitTraces walks, is
// skipped (see Reader.Warn): its pieces before a malformed part were read.
func (rd *Reader) splitRecord(msg []byte, where string, fn func(Piece) error) error {
	err := SplitTraces(msg, PieceBytes, func(piece []byte) error {
		return fn(Piece{msg: piece, where: where})
	})
	if IsBudget(err) || errors.Is(err, ErrMalformed) {
		return rd.skip(where, err)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	return nil
}

func (rd *Reader) readProtoDelimited(r io.Reader, fn func(Piece) error) error {
	var size [4]byte
	var buf []byte
	for i := 1; ; i++ {
		if _, err := io.ReadFull(r, size[:]); err != nil {
			if err == io.EOF {
				return nil
			}
			return cut(i, "length", err)
		}
		n := binary.BigEndian.Uint32(size[:])
		if n > MaxRecordBytes {
			return fmt.Errorf("OTLP protobuf message %d: length %d over %d bytes: not a length-prefixed stream?", i, n, MaxRecordBytes)
		}
		if n == 0 {
			continue // an empty request: nothing to decode
		}
		if cap(buf) < int(n) {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		if k, err := io.ReadFull(r, buf); err != nil {
			return cut(i, fmt.Sprintf("%d of %d bytes", k, n), err)
		}
		if err := rd.splitRecord(buf, fmt.Sprintf("OTLP protobuf message %d", i), fn); err != nil {
			return err
		}
	}
}

// cut is the error of record i cut short: a *TruncatedError when the
// input ended (a gzip stream cut anywhere ends the same way), else the
// read error.
func cut(i int, what string, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &TruncatedError{What: "OTLP protobuf message", Record: i, Err: fmt.Errorf("%s: %w", what, io.ErrUnexpectedEOF)}
	}
	return fmt.Errorf("OTLP protobuf message %d: %s: %w", i, what, err)
}

// decodeProto decodes one encoded request piece by piece (see Read).
func decodeProto(msg []byte, fn func(ptrace.Traces) error) error {
	var um ptrace.ProtoUnmarshaler
	return SplitTraces(msg, PieceBytes, func(piece []byte) error {
		td, err := um.UnmarshalTraces(piece)
		if err != nil {
			return err
		}
		return fn(td)
	})
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
	_, err := w.Write(AppendDelimited(nil, msg))
	return err
}

// AppendDelimited appends msg with its length prefix to b.
func AppendDelimited(b, msg []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(msg)))
	return append(b, msg...)
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
