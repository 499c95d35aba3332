// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package termtext

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

// TestDetectPiped: output to a pipe (make run | tee, a CI log) is no
// terminal, so it takes $COLUMNS or the narrow layout's 120 columns, never
// the unlimited width that picks the wide layout.
func TestDetectPiped(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	env := func(v string) func(string) string { return func(string) string { return v } }
	for _, tt := range []struct {
		width   int
		columns string
		want    int
	}{
		{Auto, "", Narrow},
		{Auto, "100", 100},
		{Auto, "wide", Narrow},
		{Auto, "-3", Narrow},
		{0, "", 0},
		{80, "100", 80},
	} {
		assert.Equal(t, tt.want, Detect(tt.width, w, env(tt.columns)), "width %d, COLUMNS=%q", tt.width, tt.columns)
	}
}
