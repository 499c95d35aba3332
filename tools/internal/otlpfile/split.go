// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package otlpfile

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// PieceBytes is the size SplitTraces cuts an export request into: decoded
// into pdata, a piece takes up to about 130 times its encoded size (an
// empty span is 2 bytes on the wire and 252 allocated, measured with
// pdata v1.71), so pieces of 512 KiB keep one decoded piece under about
// 70 MB whatever the request holds.
const PieceBytes = 512 << 10

// Field numbers of the OTLP trace messages SplitTraces walks: the
// repeated field of each level, the one that is split.
const (
	fieldResourceSpans = 1 // ExportTraceServiceRequest.resource_spans
	fieldScopeSpans    = 2 // ResourceSpans.scope_spans
	fieldSpans         = 2 // ScopeSpans.spans
)

// ErrMalformed is a malformed protobuf encoding: a record or piece that
// llmslo report skips with a warning, reading on.
var ErrMalformed = errors.New("malformed protobuf")

// SplitTraces calls fn with encoded ExportTraceServiceRequests of at most
// max bytes each that together hold every span of msg, each span once,
// under its own resource and scope: the encoded request is cut between
// resources, scopes or spans without being decoded, so a caller decodes
// one piece at a time and memory holds one piece, not the request. A
// request of at most max bytes is passed on as it is; a single span larger
// than max is one piece of its own. Only the three levels are parsed, so a
// malformed span is found when fn decodes its piece. A request holding
// a span, resource or scope past MaxPieceEntries is refused whole, before
// fn sees any of it: a *BudgetError.
func SplitTraces(msg []byte, limit int, fn func(piece []byte) error) error {
	if err := checkBudget(msg); err != nil {
		return err
	}
	if len(msg) <= limit {
		return fn(msg)
	}
	s := &splitter{limit: limit, fn: fn}
	err := eachField(msg, func(num, typ int, field, value []byte) error {
		if num != fieldResourceSpans || typ != wireBytes {
			return nil // ExportTraceServiceRequest has no other field
		}
		return s.resource(value)
	})
	if err != nil {
		return err
	}
	return s.flush()
}

// splitter gathers ResourceSpans into a request until the next would
// take it past limit. Each ResourceSpans is written into the piece once,
// from the slices of msg it is made of.
type splitter struct {
	limit int
	fn    func([]byte) error
	buf   []byte
}

// reserve makes room for a field of n bytes, flushing the piece when the
// field would take it past limit.
func (s *splitter) reserve(n int) error {
	if len(s.buf) > 0 && len(s.buf)+n > s.limit {
		return s.flush()
	}
	return nil
}

func (s *splitter) flush() error {
	if len(s.buf) == 0 {
		return nil
	}
	err := s.fn(s.buf)
	s.buf = s.buf[:0]
	return err
}

// addResource adds a whole ResourceSpans.
func (s *splitter) addResource(rs []byte) error {
	if err := s.reserve(fieldSize(len(rs))); err != nil {
		return err
	}
	s.buf = appendField(s.buf, fieldResourceSpans, rs)
	return nil
}

// addScope adds a ResourceSpans of head (its fields but the scopes) and
// one ScopeSpans whose encoding is the concatenation of scope.
func (s *splitter) addScope(head []byte, scope ...[]byte) error {
	n := 0
	for _, part := range scope {
		n += len(part)
	}
	rs := len(head) + fieldSize(n)
	if err := s.reserve(fieldSize(rs)); err != nil {
		return err
	}
	s.buf = appendTag(s.buf, fieldResourceSpans, rs)
	s.buf = append(s.buf, head...)
	s.buf = appendTag(s.buf, fieldScopeSpans, n)
	for _, part := range scope {
		s.buf = append(s.buf, part...)
	}
	return nil
}

// resource adds one ResourceSpans, cut between its scopes (and their
// spans) when it does not fit a piece by itself.
func (s *splitter) resource(rs []byte) error {
	if fieldSize(len(rs)) <= s.limit {
		return s.addResource(rs)
	}
	return splitLevel(rs, fieldScopeSpans, s.limit, false, func(head, scope []byte) error {
		if fieldSize(len(head)+fieldSize(len(scope))) <= s.limit {
			return s.addScope(head, scope)
		}
		// A run of spans fits what the piece's ResourceSpans leaves: its
		// head and the tags and lengths of both levels.
		room := s.limit - len(head) - 2*(1+binary.MaxVarintLen32)
		return splitLevel(scope, fieldSpans, room, true, func(shead, spans []byte) error {
			return s.addScope(head, shead, spans)
		})
	})
}

// splitLevel calls fn for the repeated field child of m with m's other
// fields as head: with each child's value, or with runs of whole encoded
// child fields that fit limit together with the head. A run of fields
// next to each other in m is a slice of m; fn must not keep or change
// head or items.
func splitLevel(m []byte, child, limit int, runs bool, fn func(head, items []byte) error) error {
	var head []byte
	err := eachField(m, func(num, typ int, field, _ []byte) error {
		if num != child || typ != wireBytes {
			head = append(head, field...)
		}
		return nil
	})
	if err != nil {
		return err
	}
	var run run
	err = eachField(m, func(num, typ int, field, value []byte) error {
		if num != child || typ != wireBytes {
			return nil
		}
		if !runs {
			return fn(head, value)
		}
		if run.len() > 0 && fieldSize(len(head)+run.len()+len(field)) > limit {
			if err := fn(head, run.bytes()); err != nil {
				return err
			}
			run.reset()
		}
		run.add(m, field)
		return nil
	})
	if err == nil && run.len() > 0 {
		err = fn(head, run.bytes())
	}
	return err
}

// run is a run of encoded fields of one message: a slice of the message
// while each field follows the last (the usual layout), a copy once one
// does not.
type run struct {
	from, to int // the run is m[from:to] while copied is nil
	m        []byte
	copied   []byte
}

// add appends field, a slice of m.
func (r *run) add(m, field []byte) {
	at := cap(m) - cap(field) // field's offset in m
	switch {
	case r.copied != nil:
		r.copied = append(r.copied, field...)
	case r.to == r.from:
		r.m, r.from, r.to = m, at, at+len(field)
	case at == r.to:
		r.to += len(field)
	default:
		r.copied = append(append([]byte(nil), r.m[r.from:r.to]...), field...)
	}
}

func (r *run) len() int {
	if r.copied != nil {
		return len(r.copied)
	}
	return r.to - r.from
}

func (r *run) bytes() []byte {
	if r.copied != nil {
		return r.copied
	}
	return r.m[r.from:r.to]
}

func (r *run) reset() { *r = run{} }

// Wire types of the protobuf encoding.
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

// eachField calls fn with every field of the encoded message m: its
// number, wire type, whole encoding and, for length-delimited fields, the
// value. The work is bounded by len(m): each field consumes its bytes.
func eachField(m []byte, fn func(num, typ int, field, value []byte) error) error {
	for off := 0; off < len(m); {
		tag, n := binary.Uvarint(m[off:])
		if n <= 0 || tag>>3 == 0 || tag>>3 > 1<<29-1 {
			return fmt.Errorf("%w: bad tag at byte %d", ErrMalformed, off)
		}
		start, num, typ := off, int(tag>>3), int(tag&7)
		off += n
		var value []byte
		switch typ {
		case wireVarint:
			if _, n = binary.Uvarint(m[off:]); n <= 0 {
				return fmt.Errorf("%w: bad varint at byte %d", ErrMalformed, off)
			}
			off += n
		case wireFixed64, wireFixed32:
			w := 8
			if typ == wireFixed32 {
				w = 4
			}
			if len(m)-off < w {
				return fmt.Errorf("%w: field %d cut at byte %d", ErrMalformed, num, off)
			}
			off += w
		case wireBytes:
			l, n := binary.Uvarint(m[off:])
			if n <= 0 || l > uint64(len(m)-off-n) {
				return fmt.Errorf("%w: field %d: length past the end at byte %d", ErrMalformed, num, off)
			}
			off += n
			value = m[off : off+int(l)]
			off += int(l)
		default:
			return fmt.Errorf("%w: wire type %d at byte %d", ErrMalformed, typ, start)
		}
		if err := fn(num, typ, m[start:off], value); err != nil {
			return err
		}
	}
	return nil
}

// fieldSize is the encoded size of a length-delimited field of a small
// field number with n bytes of value.
func fieldSize(n int) int {
	var b [binary.MaxVarintLen64]byte
	return 1 + binary.PutUvarint(b[:], uint64(n)) + n
}

func appendField(b []byte, num int, value []byte) []byte {
	return append(appendTag(b, num, len(value)), value...)
}

// appendTag appends the tag and length of a length-delimited field of n
// bytes.
func appendTag(b []byte, num, n int) []byte {
	b = binary.AppendUvarint(b, uint64(num)<<3|wireBytes)
	return binary.AppendUvarint(b, uint64(n))
}
