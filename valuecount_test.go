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
						if !p.table.DeriveIn(span, derive.ScopeOf(rs, ss), &st.res) {
							continue
						}
						attrs := span.Attributes()
						p.removeOwned(attrs)
						model := p.resolveModel(&st.res, rs.Resource().Attributes())
						before := attrs.Len()
						p.writeValues(attrs, &st.res, model)
						require.Equal(t, attrs.Len()-before, valueCount(&st.res, model), "%s/%s span %q", config, d.Name(), span.Name())
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
