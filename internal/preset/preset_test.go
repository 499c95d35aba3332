// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package preset

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBuiltinsValidAndDistinct(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range Builtin() {
		require.NoError(t, p.Validate(), p.Name)
		assert.False(t, seen[p.Name], "duplicate %s", p.Name)
		seen[p.Name] = true
	}
	// Strands must be tried before OpenLIT: they write the same key in
	// different units.
	names := Names()
	assert.Less(t, slices.Index(names, "strands"), slices.Index(names, "openlit"))
	assert.Less(t, slices.Index(names, "sentry"), slices.Index(names, "semconv"))
	assert.Less(t, slices.Index(names, "pydantic_ai"), slices.Index(names, "semconv"))
}

func TestValidateNewConditions(t *testing.T) {
	p := &Preset{Name: "x", Layer: LayerClient, Match: Match{Any: []Cond{{Scope: "s"}}, None: []Cond{{Scope: "a", SpanKind: "client"}}}}
	assert.ErrorContains(t, p.Validate(), "exactly one of span_name, span_name_contains, attribute, event, scope, span_kind")
	p.Match.None = []Cond{{SpanKind: "client"}}
	assert.NoError(t, p.Validate())
}
