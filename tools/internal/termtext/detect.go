// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package termtext

import (
	"os"
	"strconv"
)

// Auto is the width that asks Detect for the output's own.
const Auto = -1

// Narrow is the width the tools' narrow layouts are made for, and the
// width of output that goes to no terminal: a file or a pipe is read in an
// editor or a CI log, where a wide table wraps as badly as in a terminal.
const Narrow = 120

// Detect is the width to fit the tables to: width itself unless it is
// Auto; else the terminal's width when f is one, $COLUMNS when it is set,
// and Narrow otherwise.
func Detect(width int, f *os.File, getenv func(string) string) int {
	if width != Auto {
		return width
	}
	if w, ok := terminalWidth(f); ok {
		return w
	}
	if c, err := strconv.Atoi(getenv("COLUMNS")); err == nil && c > 0 {
		return c
	}
	return Narrow
}
