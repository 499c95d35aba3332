// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package otlpfile

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// field is one length-delimited protobuf field of a one-byte tag.
func field(tag byte, value ...[]byte) []byte {
	v := bytes.Join(value, nil)
	return append(binary.AppendUvarint([]byte{tag}, uint64(len(v))), v...)
}

// empties is n empty length-delimited fields of tag: 2 bytes each.
func empties(tag byte, n int) []byte { return bytes.Repeat([]byte{tag, 0}, n) }

// Tags of the fields the bombs use (field number << 3 | 2).
const (
	tagRS, tagResource, tagScopeSpans, tagScope, tagSpan = 0x0a, 0x0a, 0x12, 0x0a, 0x12
	tagResourceAttr, tagScopeAttr, tagSpanAttr           = 0x0a, 0x1a, 0x4a
	tagEvent, tagLink, tagKVValue, tagArray, tagArrayVal = 0x5a, 0x6a, 0x12, 0x2a, 0x0a
)

// request is an ExportTraceServiceRequest of one resource (its Resource
// fields res), one scope (its InstrumentationScope fields sc) and one
// span of fields span.
func request(res, sc, span []byte) []byte {
	return field(tagRS, field(tagResource, res), field(tagScopeSpans, field(tagScope, sc), field(tagSpan, span)))
}

// nested is an attribute whose value is arrays in arrays, depth deep.
func nested(depth int) []byte {
	v := []byte{}
	for range depth {
		v = field(tagArray, field(tagArrayVal, v))
	}
	return field(tagSpanAttr, field(tagKVValue, v), bytes.Repeat([]byte{0x0a, 0x01, 'k'}, PieceBytes/3))
}

// TestSplitTracesBudget: a request holding a resource, scope or span
// whose entries pass MaxPieceEntries is refused whole, naming it, before
// any piece is handed out; one at the budget, or spread over many spans,
// is read. Before, the one resource or span was decoded whole: the 64 KB
// gzip of 33 M empty attributes took 5 GB.
func TestSplitTracesBudget(t *testing.T) {
	over := MaxPieceEntries + 1
	for _, c := range []struct {
		name    string
		msg     []byte
		where   string // "" for read
		wantErr error
		spans   int
	}{
		{"resource_attributes", request(empties(tagResourceAttr, over), nil, nil), "resource 1", nil, 0},
		{"scope_attributes", request(nil, empties(tagScopeAttr, over), nil), "resource 1 scope 1", nil, 0},
		{"span_attributes", request(nil, nil, empties(tagSpanAttr, over)), "resource 1 scope 1 span 1", nil, 0},
		{"span_events", request(nil, nil, empties(tagEvent, over)), "resource 1 scope 1 span 1", nil, 0},
		{"span_links", request(nil, nil, empties(tagLink, over)), "resource 1 scope 1 span 1", nil, 0},
		{"array_values", request(nil, nil, field(tagSpanAttr, field(tagKVValue, field(tagArray, empties(tagArrayVal, over))))), "resource 1 scope 1 span 1", nil, 0},
		{"resource_and_span", request(empties(tagResourceAttr, over/2), nil, empties(tagEvent, over/2+1)), "resource 1 scope 1 span 1", nil, 0},
		{"nested_101", request(nil, nil, nested(101)), "", ErrMalformed, 0},
		{"span_at_budget", request(nil, nil, empties(tagEvent, MaxPieceEntries-8)), "", nil, 1},
		{"many_spans", field(tagRS, field(tagScopeSpans, empties(tagSpan, 3*MaxPieceEntries))), "", nil, 3 * MaxPieceEntries},
	} {
		t.Run(c.name, func(t *testing.T) {
			pieces, spans := 0, 0
			err := SplitTraces(c.msg, PieceBytes, func(piece []byte) error {
				pieces++
				td, err := (Piece{msg: piece}).Decode()
				spans += td.SpanCount()
				return err
			})
			switch {
			case c.where != "":
				var b *BudgetError
				require.ErrorAs(t, err, &b)
				assert.Equal(t, c.where, b.Where)
				assert.Equal(t, c.where+" holds more than 262144 entries (attributes, events, links, array values; decoded whole, it is one piece): over the budget of a piece, refused", err.Error())
				assert.Zero(t, pieces, "refused before any piece")
			case c.wantErr != nil:
				require.ErrorIs(t, err, c.wantErr)
				assert.Zero(t, pieces)
			default:
				require.NoError(t, err)
				assert.Equal(t, c.spans, spans)
			}
		})
	}
}

// TestCaptureRefusesOverBudget: llmslo capture answers a request past the
// budget 413 with the reason, and writes nothing of it.
func TestCaptureRefusesOverBudget(t *testing.T) {
	ff := &failingFile{}
	c, err := NewCapture("127.0.0.1:0", NewCaptureFile(ff, 0, false, false, false), CaptureOptions{})
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close(context.Background())) }()
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	_, _ = zw.Write(request(empties(tagResourceAttr, MaxPieceEntries+1), nil, nil))
	require.NoError(t, zw.Close())
	hr, err := http.NewRequest(http.MethodPost, "http://"+c.Addr()+"/v1/traces", &zb)
	require.NoError(t, err)
	hr.Header.Set("Content-Type", "application/x-protobuf")
	hr.Header.Set("Content-Encoding", "gzip")
	resp, err := http.DefaultClient.Do(hr)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
	assert.Equal(t, "OTLP protobuf: resource 1 holds more than 262144 entries (attributes, events, links, array values; decoded whole, it is one piece): over the budget of a piece, refused\n", string(body))
	assert.Zero(t, ff.Len())
}

// TestReadSkipsBadRecords: a record past the budget, or malformed, in the
// middle of a length-prefixed input is skipped with a warning naming it,
// and the records after it are read; without a Warn the reading stops at
// it. Before, one such record failed the whole report.
func TestReadSkipsBadRecords(t *testing.T) {
	good := requestBytes(t, oneSpan(1))
	badSpan := field(tagRS, field(tagScopeSpans, field(tagSpan, []byte{0x4a, 0x05, 0x0a}))) // an attribute cut short
	records := [][]byte{good, request(nil, nil, empties(tagEvent, MaxPieceEntries+1)), good, badSpan, good, {0x0a, 0x7f}, good}
	var in []byte
	for _, r := range records {
		in = AppendDelimited(in, r)
	}
	var warned []string
	rd := NewReader(ReadLimits{})
	rd.Warn = func(s string) { warned = append(warned, s) }
	n := 0
	require.NoError(t, rd.Read(bytes.NewReader(in), nil, func(td ptrace.Traces) error { n += td.SpanCount(); return nil }))
	assert.Equal(t, 4, n)
	require.Len(t, warned, 3)
	assert.True(t, strings.HasPrefix(warned[0], "OTLP protobuf message 2: resource 1 scope 1 span 1 holds more than 262144 entries"), warned[0])
	assert.True(t, strings.HasPrefix(warned[1], "OTLP protobuf message 4: malformed protobuf: "), warned[1])
	assert.True(t, strings.HasSuffix(warned[1], ": skipped"), warned[1])
	assert.Equal(t, "OTLP protobuf message 6: malformed protobuf: unexpected EOF: skipped", warned[2])

	err := NewReader(ReadLimits{}).Read(bytes.NewReader(in), nil, func(ptrace.Traces) error { return nil })
	require.ErrorContains(t, err, "OTLP protobuf message 2: resource 1 scope 1 span 1 holds more than")
}

// TestReadJSONSkipsBadDocuments: in OTLP/JSON lines, a torn line (a
// writer stopped inside it, the next request written right after it) and
// a document that is JSON but not OTLP are skipped with a warning naming
// them, and every request after them is read. Before, the torn line
// failed the whole report ("OTLP/JSON document 3: invalid character '{'
// after object key:value pair").
func TestReadJSONSkipsBadDocuments(t *testing.T) {
	line := func(id byte) string {
		b, err := (&ptrace.JSONMarshaler{}).MarshalTraces(oneSpan(id))
		require.NoError(t, err)
		return string(b) + "\n"
	}
	in := line(1) + line(2) + `{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"a","attributes":[{"key":"k"` +
		line(3) + `{"resourceSpans":5}` + "\n" + line(4) + "  \n" + line(5)
	var warned []string
	rd := NewReader(ReadLimits{})
	rd.Warn = func(s string) { warned = append(warned, s) }
	var ids []byte
	require.NoError(t, rd.Read(strings.NewReader(in), nil, func(td ptrace.Traces) error {
		ids = append(ids, td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).SpanID()[7])
		return nil
	}))
	assert.Equal(t, []byte{1, 2, 3, 4, 5}, ids)
	require.Len(t, warned, 2)
	assert.Equal(t, `OTLP/JSON document 3: invalid character '{' after object key:value pair: skipped, reading on from the next line that starts a document`, warned[0])
	assert.True(t, strings.HasPrefix(warned[1], "OTLP/JSON document 5: "), warned[1])
	assert.True(t, strings.HasSuffix(warned[1], ": skipped"), warned[1])

	err := NewReader(ReadLimits{}).Read(strings.NewReader(in), nil, func(ptrace.Traces) error { return nil })
	require.EqualError(t, err, `OTLP/JSON document 3: invalid character '{' after object key:value pair`)
}
