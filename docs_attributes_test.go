// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloprocessor

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/llmslo/llmslo/internal/contract"
	"github.com/llmslo/llmslo/internal/derive"
)

// processorDocs is where the processor's attributes are documented.
const processorDocs = "docs/processor.md"

// docSection returns processorDocs' text from the heading to the next
// heading of the same or a higher level.
func docSection(t *testing.T, heading string) string {
	t.Helper()
	b, err := os.ReadFile(processorDocs)
	require.NoError(t, err)
	text := string(b)
	i := strings.Index(text, "\n"+heading+"\n")
	require.GreaterOrEqual(t, i, 0, "%s has no %q", processorDocs, heading)
	rest := text[i+len(heading)+2:]
	level := heading[:strings.IndexByte(heading, ' ')+1]
	for j := 0; j < len(rest); {
		k := strings.Index(rest[j:], "\n#")
		if k < 0 {
			break
		}
		j += k + 1
		line := rest[j:]
		if h := line[:strings.IndexByte(line+" ", ' ')+1]; len(h) <= len(level) && strings.Trim(h, "# ") == "" {
			return rest[:j]
		}
	}
	return rest
}

// TestDocsAttributes: the processor docs' "Attributes written" table lists
// exactly the keys the processor owns (under the default prefix; the SLO
// keys by their pattern), and its llm.metrics.error list and reason table
// exactly the fields and reasons of internal/derive.
func TestDocsAttributes(t *testing.T) {
	section := docSection(t, "## Attributes written")
	var documented []string
	for _, row := range regexp.MustCompile("(?m)^\\| (`llm\\.[^|]+)\\|").FindAllStringSubmatch(section, -1) {
		for _, m := range regexp.MustCompile("`(llm\\.[^`]+)`").FindAllStringSubmatch(row[1], -1) {
			documented = append(documented, m[1])
		}
	}
	keys := contract.NewKeys(contract.DefaultPrefix)
	var owned []string
	for _, suffix := range contract.FixedSuffixes() {
		owned = append(owned, contract.DefaultPrefix+suffix)
	}
	owned = append(owned, keys.SLOMet("<name>"), keys.SLOViolations("<name>"), keys.SLOCauses("<name>"))
	for _, k := range owned {
		require.True(t, keys.Owns(strings.ReplaceAll(k, "<name>", "x")), k)
	}
	slices.Sort(documented)
	slices.Sort(owned)
	require.Equal(t, owned, documented, "docs attribute table vs the contract's keys")

	fieldList := section[strings.Index(section, "`llm.metrics.error` fields:"):]
	fieldList = fieldList[:strings.Index(fieldList, " (a per-request")]
	var fields []string
	for _, m := range regexp.MustCompile("`([a-z0-9_.]+)`").FindAllStringSubmatch(fieldList, -1)[1:] {
		fields = append(fields, m[1])
	}
	var want []string
	for f := range derive.NumFields {
		want = append(want, f.String())
	}
	require.Equal(t, want, fields, "docs llm.metrics.error fields vs derive's")

	var reasons []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z_0-9]+)` \\|").FindAllStringSubmatch(section[strings.Index(section, "| reason |"):], -1) {
		reasons = append(reasons, m[1])
	}
	want = nil
	for r := derive.NoReason + 1; r < derive.NumReasons; r++ {
		want = append(want, r.String())
	}
	slices.Sort(want)
	slices.Sort(reasons)
	require.Equal(t, want, reasons, "docs reason table vs derive's")
}
