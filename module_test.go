// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloprocessor

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// toolsOnly names what only the tools module (tools/: the CLI, the report,
// its plots, the dashboards and the load generator) may bring in. A
// distribution that builds in llm_slo takes the component module's whole
// requirement graph, so none of these may enter it.
var toolsOnly = []string{
	"gonum.org/v1/plot",
	"github.com/grafana/grafana-foundation-sdk",
	"github.com/spf13/cobra",
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace",
}

func named(path string) string {
	for _, prefix := range toolsOnly {
		if path == prefix || strings.HasPrefix(path, prefix+"/") {
			return prefix
		}
	}
	return ""
}

// TestComponentModuleRequiresNoTools: go.mod, directly or indirectly,
// requires none of the tools' modules.
func TestComponentModuleRequiresNoTools(t *testing.T) {
	out, err := exec.Command("go", "mod", "edit", "-json").Output()
	require.NoError(t, err)
	var mod struct{ Require []struct{ Path string } }
	require.NoError(t, json.Unmarshal(out, &mod))
	require.NotEmpty(t, mod.Require)
	for _, r := range mod.Require {
		require.Empty(t, named(r.Path), "go.mod requires %s, which only the tools module may use", r.Path)
	}
}

// TestComponentPackagesImportNoTools: the processor's and the connector's
// packages, with everything they import, name none of the tools' packages.
func TestComponentPackagesImportNoTools(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", ".", "./llmsloconnector").Output()
	require.NoError(t, err)
	deps := strings.Fields(string(out))
	require.Contains(t, deps, "github.com/llmslo/llmslo/llmsloconnector")
	for _, dep := range deps {
		require.Empty(t, named(dep), "the components import %s", dep)
		require.False(t, strings.HasPrefix(dep, "github.com/llmslo/llmslo/tools/"), "the components import %s", dep)
	}
}
