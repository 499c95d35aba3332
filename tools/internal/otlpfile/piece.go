// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package otlpfile

import (
	"fmt"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// A Piece is one piece of an export request as ReadPieces yields it:
// protobuf still encoded, so that decoding, the largest part of reading,
// can run on several cores; OTLP/JSON decoded already (a JSON document is
// decoded whole). An encoded piece borrows the reader's buffer until fn
// returns: KeepIn copies it for later.
type Piece struct {
	msg   []byte
	td    ptrace.Traces
	where string
}

// Decode returns the piece's spans.
func (p Piece) Decode() (ptrace.Traces, error) {
	if p.msg == nil {
		return p.td, nil
	}
	var um ptrace.ProtoUnmarshaler
	td, err := um.UnmarshalTraces(p.msg)
	if err != nil {
		return td, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return td, nil
}

// KeepIn returns the piece with its own copy of the encoded bytes, made
// in buf's storage (grown when short), and that storage, which a later
// KeepIn may reuse once the piece is done with: a reader of many pieces
// then copies them without allocating.
func (p Piece) KeepIn(buf []byte) (Piece, []byte) {
	if p.msg == nil {
		return p, buf
	}
	buf = append(buf[:0], p.msg...)
	p.msg = buf
	return p, buf
}

// Wrap puts err in terms of the record the piece came from, as Read words
// the errors it returns itself: "OTLP protobuf message 3: ...". An error of
// a decoded piece (OTLP/JSON) is returned as it is, as Read does.
func (p Piece) Wrap(err error) error {
	if err == nil || p.where == "" {
		return err
	}
	return fmt.Errorf("%s: %w", p.where, err)
}

// decoding is fn behind a decoder of each piece, as Read and ReadFile call
// it: a piece that does not decode is skipped (see Reader.Warn).
func (rd *Reader) decoding(fn func(ptrace.Traces) error) func(Piece) error {
	return func(p Piece) error {
		td, err := p.Decode()
		if err != nil && rd.Warn != nil {
			return rd.skip(p.where, err)
		}
		if err != nil {
			return err // named by the record's reader
		}
		return fn(td)
	}
}
