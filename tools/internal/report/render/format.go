// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package render

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/llmslo/llmslo/internal/contract"
	"github.com/llmslo/llmslo/tools/internal/report/schema"
)

// The cell formats every renderer shares.

// ms formats seconds as milliseconds with four significant digits.
func ms(n schema.Num) string {
	if !n.Valid() {
		return "-"
	}
	v := float64(n) * 1e3
	switch a := math.Abs(v); {
	case a == 0:
		return "0"
	case a < 0.001:
		return fmt.Sprintf("%.3g", v)
	case a < 1:
		return fmt.Sprintf("%.4f", v)
	case a < 10:
		return fmt.Sprintf("%.3f", v)
	case a < 100:
		return fmt.Sprintf("%.2f", v)
	case a < 1000:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

func pct(n schema.Num) string {
	if !n.Valid() {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", float64(n)*100)
}

func rate(n schema.Num) string {
	if !n.Valid() {
		return "-"
	}
	if float64(n) >= 100 {
		return fmt.Sprintf("%.0f", float64(n))
	}
	return fmt.Sprintf("%.2f", float64(n))
}

func dur(s float64) string {
	d := s
	switch {
	case d == 0:
		return "0"
	case d < 1:
		return strings.TrimSuffix(fmt.Sprintf("%gms", d*1e3), ".0")
	}
	return fmt.Sprintf("%gs", d)
}

// truncate shortens s to n runes, keeping its end (a group's last
// dimension, usually the layer, tells rows apart).
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	rs := []rune(s)
	tail := min(8, n/3)
	return string(rs[:n-1-tail]) + "…" + string(rs[len(rs)-tail:])
}

func constraintsLine(c map[string]float64) string {
	var parts []string
	for _, id := range constraintIDs {
		if v, ok := c[id]; ok {
			parts = append(parts, fmt.Sprintf("%s <= %s", id, dur(v)))
		}
	}
	return strings.Join(parts, ", ")
}

// constraintIDs are the constraints in the order the report lists them.
var constraintIDs = contract.Constraints[:]

func sortedCounts(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return out
}

func orDefault(p string) string {
	if p == "" {
		return "the processor's defaults"
	}
	return p
}
