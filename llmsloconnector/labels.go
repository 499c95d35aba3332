// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
	"strings"
	"unicode/utf8"
)

// labelFixes counts the label values a batch had to repair.
type labelFixes struct{ repaired, truncated int64 }

// label returns v as a backend accepts it: invalid UTF-8 replaced by
// U+FFFD (the Prometheus exporter drops a whole series over one bad byte),
// then cut to limit bytes at a character boundary (limit 0: no cut). A
// valid, short value is returned as it is, without allocating.
func label(v string, limit int, fixes *labelFixes) string {
	if !utf8.ValidString(v) {
		v = strings.ToValidUTF8(v, "\uFFFD")
		fixes.repaired++
	}
	if limit > 0 && len(v) > limit {
		cut := limit
		for cut > 0 && !utf8.RuneStart(v[cut]) {
			cut--
		}
		v = v[:cut]
		fixes.truncated++
	}
	return v
}
