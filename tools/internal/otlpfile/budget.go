// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package otlpfile

import (
	"errors"
	"fmt"
)

// MaxPieceEntries is the budget of decoded work of one piece: the fields
// it holds, every repeated entry counted (resources, scopes, spans,
// attributes, events, links, the values of arrays and maps, down every
// level). SplitTraces cuts a request between spans, so only what cannot
// be cut, a span with its resource and scope, can go past it: such a
// request is refused whole (*BudgetError). Every field takes at least 2
// bytes, so a piece of PieceBytes holds at most this many and is never
// refused: only a unit larger than a piece is counted. Decoded, an entry
// takes up to about 250 bytes (an empty span), so a piece stays under
// about 70 MB however its bytes are spent.
const MaxPieceEntries = PieceBytes / 2

// maxNesting bounds how deep values nest in a piece that is counted: the
// depth pdata's decoder refuses past (its proto.RecursionLimit).
const maxNesting = 100

// BudgetError is a request holding a span, resource or scope past
// MaxPieceEntries: llmslo capture answers it 413, llmslo report skips
// the record with a warning.
type BudgetError struct {
	// Where is the unit: "resource 1", "resource 1 scope 2 span 3".
	Where string
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("%s holds more than %d entries (attributes, events, links, array values; decoded whole, it is one piece): over the budget of a piece, refused", e.Where, MaxPieceEntries)
}

// errTooDeep is a value nested past maxNesting.
var errTooDeep = fmt.Errorf("%w: values nested more than %d deep", ErrMalformed, maxNesting)

// schema names the fields of a message that are messages themselves, with
// their own schema; the other fields are counted, not entered.
type schema map[int]schema

var (
	anyValue  = schema{}
	keyValue  = schema{2: anyValue}
	resource  = schema{1: keyValue, 3: schema{}} // attributes, entity_refs
	scope     = schema{3: keyValue}
	spanShape = schema{9: keyValue, 11: {3: keyValue}, 13: {4: keyValue}, 15: {}} // attributes, events, links, status

	resourceSpansHead = schema{1: resource} // its other fields but scope_spans
	scopeSpansHead    = schema{1: scope}    // its other fields but spans
)

func init() {
	anyValue[5] = schema{1: anyValue} // array_value.values
	anyValue[6] = schema{1: keyValue} // kvlist_value.values
}

// entryCounter counts the fields of a unit, against MaxPieceEntries.
type entryCounter struct {
	n     int
	where func() string
}

// count counts the fields of m but skip, entering the messages of s.
func (c *entryCounter) count(m []byte, s schema, skip, depth int) error {
	if depth > maxNesting {
		return errTooDeep
	}
	return eachField(m, func(num, typ int, _, value []byte) error {
		if num == skip && typ == wireBytes {
			return nil
		}
		if c.n++; c.n > MaxPieceEntries {
			return &BudgetError{Where: c.where()}
		}
		if child, ok := s[num]; ok && typ == wireBytes {
			return c.count(value, child, 0, depth+1)
		}
		return nil
	})
}

// checkBudget refuses msg, an ExportTraceServiceRequest, if a span with
// its resource and scope (or a resource or scope alone) holds more than
// MaxPieceEntries. Only units larger than PieceBytes are counted.
func checkBudget(msg []byte) error {
	if len(msg) <= PieceBytes {
		return nil
	}
	ri := 0
	return eachField(msg, func(num, typ int, _, rs []byte) error {
		if num != fieldResourceSpans || typ != wireBytes {
			return nil
		}
		ri++
		if len(rs) <= PieceBytes {
			return nil
		}
		return checkResource(rs, ri)
	})
}

// checkResource counts the head of a ResourceSpans (its resource) and
// each of its scopes that is larger than a piece.
func checkResource(rs []byte, ri int) error {
	c := &entryCounter{where: func() string { return fmt.Sprintf("resource %d", ri) }}
	if err := c.count(rs, resourceSpansHead, fieldScopeSpans, 0); err != nil {
		return err
	}
	head, headLen := c.n, 0
	headLen, _ = headBytes(rs, fieldScopeSpans)
	si := 0
	return eachField(rs, func(num, typ int, _, ss []byte) error {
		if num != fieldScopeSpans || typ != wireBytes {
			return nil
		}
		si++
		if headLen+len(ss) <= PieceBytes {
			return nil
		}
		return checkScope(ss, head, headLen, fmt.Sprintf("resource %d scope %d", ri, si))
	})
}

// checkScope counts, for each span of a ScopeSpans that with the heads
// is larger than a piece, the heads and the span.
func checkScope(ss []byte, head, headLen int, where string) error {
	c := &entryCounter{n: head, where: func() string { return where }}
	if err := c.count(ss, scopeSpansHead, fieldSpans, 0); err != nil {
		return err
	}
	own, largest := headBytes(ss, fieldSpans)
	head, headLen = c.n, headLen+own
	if headLen+largest <= PieceBytes {
		return nil // no span makes a piece past PieceBytes
	}
	k := 0
	return eachField(ss, func(num, typ int, _, span []byte) error {
		if num != fieldSpans || typ != wireBytes {
			return nil
		}
		k++
		if headLen+len(span) <= PieceBytes {
			return nil
		}
		sc := &entryCounter{n: head, where: func() string { return fmt.Sprintf("%s span %d", where, k) }}
		return sc.count(span, spanShape, 0, 1)
	})
}

// headBytes is the size of m's fields but those of the repeated field
// child, what every piece of m repeats, and the size of its largest
// child.
func headBytes(m []byte, child int) (head, largest int) {
	head = len(m)
	_ = eachField(m, func(num, typ int, field, _ []byte) error {
		if num == child && typ == wireBytes {
			head -= len(field)
			largest = max(largest, len(field))
		}
		return nil
	})
	return head, largest
}

// IsBudget reports whether err is a request refused for its budget.
func IsBudget(err error) bool {
	var b *BudgetError
	return errors.As(err, &b)
}
