// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

//go:build !unix

package otlpfile

import "os"

// lockFile takes no lock where flock(2) does not exist: the project's
// releases are built for Linux, where it does (lock_unix.go).
func lockFile(*os.File) error { return nil }
