// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package otlpfile

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// splitInput is a request of resources × scopes × spans, each span named
// after where it is.
func splitInput(resources, scopes, spans int) ptrace.Traces {
	td := ptrace.NewTraces()
	for r := range resources {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", fmt.Sprintf("svc-%d", r))
		rs.SetSchemaUrl("https://opentelemetry.io/schemas/1.37.0")
		for s := range scopes {
			ss := rs.ScopeSpans().AppendEmpty()
			ss.Scope().SetName(fmt.Sprintf("scope-%d", s))
			ss.SetSchemaUrl("https://example.com/scope")
			for k := range spans {
				sp := ss.Spans().AppendEmpty()
				sp.SetName(fmt.Sprintf("%d/%d/%d", r, s, k))
				sp.Attributes().PutStr("pad", "0123456789abcdef0123456789abcdef")
			}
		}
	}
	return td
}

// where lists every span as resource name / scope name / span name, with
// the schema URLs it is under.
func where(td ptrace.Traces) []string {
	var out []string
	for _, rs := range td.ResourceSpans().All() {
		svc, _ := rs.Resource().Attributes().Get("service.name")
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				out = append(out, fmt.Sprintf("%s %s %s|%s %s", svc.Str(), ss.Scope().Name(), sp.Name(), rs.SchemaUrl(), ss.SchemaUrl()))
			}
		}
	}
	return out
}

// splitAll decodes every piece of msg split at limit.
func splitAll(t *testing.T, msg []byte, limit int) ([]string, []int) {
	var got []string
	var sizes []int
	err := SplitTraces(msg, limit, func(piece []byte) error {
		sizes = append(sizes, len(piece))
		var um ptrace.ProtoUnmarshaler
		td, err := um.UnmarshalTraces(piece)
		require.NoError(t, err)
		got = append(got, where(td)...)
		return nil
	})
	require.NoError(t, err)
	return got, sizes
}

// TestSplitTraces: every span arrives once, under its own resource and
// scope, in order, in pieces of at most the limit, whether the request is
// cut between resources, scopes or spans.
func TestSplitTraces(t *testing.T) {
	for _, c := range []struct {
		name                     string
		resources, scopes, spans int
		limit                    int
		pieces                   int
	}{
		{"fits whole", 2, 2, 3, 1 << 20, 1},
		{"between resources", 4, 1, 3, 700, 2},
		{"between scopes", 1, 4, 3, 700, 2},
		{"between spans", 1, 1, 40, 700, 5},
		{"a span over the limit is a piece of its own", 1, 1, 3, 10, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			td := splitInput(c.resources, c.scopes, c.spans)
			msg, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
			require.NoError(t, err)
			got, sizes := splitAll(t, msg, c.limit)
			assert.Equal(t, where(td), got)
			assert.Len(t, sizes, c.pieces)
			if c.limit >= 700 {
				for _, n := range sizes {
					assert.LessOrEqual(t, n, c.limit)
				}
			}
		})
	}
}

// TestSplitTracesInterleavedFields: a scope whose spans are not next to
// each other in the encoding (another field between them, which protobuf
// allows) is cut as one whose spans are.
func TestSplitTracesInterleavedFields(t *testing.T) {
	td := splitInput(1, 1, 12)
	msg, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	require.NoError(t, err)
	moved := interleaveScopeSchema(t, msg)
	require.Len(t, moved, len(msg))
	require.NotEqual(t, msg, moved)
	want, _ := splitAll(t, msg, 1<<20)
	got, sizes := splitAll(t, moved, 400)
	assert.Equal(t, want, got)
	assert.Greater(t, len(sizes), 2)
}

// interleaveScopeSchema moves the only scope's schema_url (field 3,
// encoded after the spans) between its sixth and seventh span.
func interleaveScopeSchema(t *testing.T, msg []byte) []byte {
	var out []byte
	require.NoError(t, eachField(msg, func(_, _ int, _, rs []byte) error {
		var rsOut []byte
		require.NoError(t, eachField(rs, func(num, _ int, field, scope []byte) error {
			if num != fieldScopeSpans {
				rsOut = append(rsOut, field...)
				return nil
			}
			var spans [][]byte
			var rest, schema []byte
			require.NoError(t, eachField(scope, func(num, _ int, field, _ []byte) error {
				switch num {
				case fieldSpans:
					spans = append(spans, field)
				case 3:
					schema = field
				default:
					rest = append(rest, field...)
				}
				return nil
			}))
			require.NotNil(t, schema)
			ss := rest
			for i, sp := range spans {
				if i == 6 {
					ss = append(ss, schema...)
				}
				ss = append(ss, sp...)
			}
			rsOut = appendField(rsOut, fieldScopeSpans, ss)
			return nil
		}))
		out = appendField(out, fieldResourceSpans, rsOut)
		return nil
	}))
	return out
}
