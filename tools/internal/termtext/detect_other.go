// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

//go:build !linux && !darwin

package termtext

import "os"

// terminalWidth reports no terminal where the width cannot be asked for:
// Detect falls back to $COLUMNS and Narrow.
func terminalWidth(*os.File) (int, bool) { return 0, false }
