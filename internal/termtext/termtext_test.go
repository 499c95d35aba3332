// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package termtext

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestWrap(t *testing.T) {
	for _, tt := range []struct {
		in    string
		width int
		want  string
	}{
		{"short line", 20, "short line"},
		{"one two three four", 9, "one two\n  three\n  four"},
		{"unbreakable-word-here x", 5, "unbreakable-word-here\n  x"},
		{"a b\nc d e f", 3, "a b\nc d\n  e\n  f"},
		{"no limit at all", 0, "no limit at all"},
	} {
		got := Wrap(tt.in, tt.width, "  ")
		assert.Equal(t, tt.want, got, "%q at %d", tt.in, tt.width)
	}
}

func TestWidthAndFits(t *testing.T) {
	assert.Equal(t, 5, Width("abc\nTTFT≤\n"))
	assert.True(t, Fits("abc\nabcde", 5))
	assert.False(t, Fits("abc\nabcdef", 5))
	assert.True(t, Fits("anything at all", 0))
}
