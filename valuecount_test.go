// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloprocessor

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/llmslo/llmslo/internal/derive"
	"github.com/llmslo/llmslo/internal/metadata"
)

// TestValueCount: the room write reserves is exactly what writeValues
// writes, on every span of every golden input, per chunk and token-aware.
func TestValueCount(t *testing.T) {
	dirs, err := os.ReadDir(filepath.Join("testdata", "traces"))
	require.NoError(t, err)
	for _, config := range []string{"golden", "token_aware"} {
		cfg, err := loadConfig(t, config)
		require.NoError(t, err)
		p, err := newProcessor(processortest.NewNopSettings(metadata.Type), cfg, new(consumertest.TracesSink))
		require.NoError(t, err)
		st := p.getState()
		for _, d := range dirs {
			input, err := golden.ReadTraces(filepath.Join("testdata", "traces", d.Name(), "input.yaml"))
			require.NoError(t, err)
			checked := 0
			for _, rs := range input.ResourceSpans().All() {
				for _, ss := range rs.ScopeSpans().All() {
					for _, span := range ss.Spans().All() {
						if !p.table.DeriveIn(span, derive.ScopeOf(rs, ss), st.res) {
							continue
						}
						attrs := span.Attributes()
						p.removeOwned(attrs)
						model := p.resolveModel(st.res, rs.Resource().Attributes(), st)
						before := attrs.Len()
						p.writeValues(attrs, model, st)
						require.Equal(t, attrs.Len()-before, valueCount(st.res, model, p.parts), "%s/%s span %q", config, d.Name(), span.Name())
						checked++
					}
				}
			}
			if d.Name() != "non_llm" {
				require.Positive(t, checked, "%s: no LLM span", d.Name())
			}
		}
	}
}

// TestVerdictRoom: the room write reserves for the verdicts is exactly what
// writeVerdicts writes when no SLO reads the span's attributes (the golden
// configurations), and a bound when some do (per_request).
func TestVerdictRoom(t *testing.T) {
	dirs, err := os.ReadDir(filepath.Join("testdata", "traces"))
	require.NoError(t, err)
	for _, c := range []struct {
		config string
		exact  bool
	}{{"golden", true}, {"token_aware", true}, {"per_request", false}} {
		cfg, err := loadConfig(t, c.config)
		require.NoError(t, err)
		p, err := newProcessor(processortest.NewNopSettings(metadata.Type), cfg, new(consumertest.TracesSink))
		require.NoError(t, err)
		st := p.getState()
		written := 0
		for _, d := range dirs {
			input, err := golden.ReadTraces(filepath.Join("testdata", "traces", d.Name(), "input.yaml"))
			require.NoError(t, err)
			for _, rs := range input.ResourceSpans().All() {
				for _, ss := range rs.ScopeSpans().All() {
					for _, span := range ss.Spans().All() {
						if !p.table.DeriveIn(span, derive.ScopeOf(rs, ss), st.res) {
							continue
						}
						attrs, resource := span.Attributes(), rs.Resource().Attributes()
						p.removeOwned(attrs)
						st.res.Marked = false
						model := p.resolveModel(st.res, resource, st)
						room := p.verdictRoom(attrs, resource, model, st)
						before := attrs.Len() + valueCount(st.res, model, p.parts)
						p.write(span, resource, st)
						got := attrs.Len() - before
						written += got
						if c.exact {
							require.Equal(t, room, got, "%s/%s span %q", c.config, d.Name(), span.Name())
						} else {
							require.LessOrEqual(t, got, room, "%s/%s span %q", c.config, d.Name(), span.Name())
						}
					}
				}
			}
		}
		require.Positive(t, written, "%s: no verdict written", c.config)
	}
}
