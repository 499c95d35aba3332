// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

// Package termtext fits the demo's output to a terminal: it measures
// rendered text and folds long lines at word boundaries, so that a table
// can be rendered wide and replaced by a narrower layout when it would wrap
// mid-number.
package termtext

import (
	"strings"
	"unicode/utf8"
)

// Width is the widest line of s, in runes.
func Width(s string) int {
	w := 0
	for line := range strings.SplitSeq(s, "\n") {
		w = max(w, utf8.RuneCountInString(line))
	}
	return w
}

// Fits reports whether every line of s fits in width columns; a width of 0
// or less means unlimited.
func Fits(s string, width int) bool {
	return width <= 0 || Width(s) <= width
}

// Wrap folds each line of s longer than width at spaces, continuing with
// indent. A word longer than the width stays whole on its own line. A width
// of 0 or less returns s unchanged.
func Wrap(s string, width int, indent string) string {
	if width <= 0 {
		return s
	}
	var b strings.Builder
	for i, line := range strings.Split(s, "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		col := 0
		for j, word := range strings.Split(line, " ") {
			n := utf8.RuneCountInString(word)
			switch {
			case j == 0:
			case col+1+n > width && col > utf8.RuneCountInString(indent):
				b.WriteString("\n" + indent)
				col = utf8.RuneCountInString(indent)
			default:
				b.WriteByte(' ')
				col++
			}
			b.WriteString(word)
			col += n
		}
	}
	return b.String()
}
