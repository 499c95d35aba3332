// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package schema

import (
	"fmt"
	"strings"
)

// OverflowName is how the text, Markdown and HTML reports name the
// overflow group.
const OverflowName = "(other groups)"

// OverflowNote says that groups past MaxGroups were reported together, if
// any were.
func (r *Report) OverflowNote() string {
	if r.OverflowRequests == 0 {
		return ""
	}
	return fmt.Sprintf("More than %d groups: the %d requests of the rest are reported together as %q (raise --max-groups, or group by fewer dimensions).",
		r.MaxGroups-1, r.OverflowRequests, OverflowName)
}

// GroupName names g for people: its dimension values in GroupBy order,
// "all" for every request, OverflowName for the overflow group.
func (r *Report) GroupName(g Group) string {
	if len(g) == 0 {
		return "all"
	}
	if g.IsOverflow() {
		return OverflowName
	}
	parts := make([]string, 0, len(r.GroupBy))
	for _, d := range r.GroupBy {
		v := g[d]
		if v == "" {
			v = "-"
		}
		parts = append(parts, v)
	}
	return strings.Join(parts, " / ")
}
