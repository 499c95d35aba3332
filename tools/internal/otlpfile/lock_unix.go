// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

//go:build unix

package otlpfile

import (
	"errors"
	"os"
	"syscall"
)

// lockFile takes an exclusive lock on f for as long as it is open, or
// fails at once if another open file holds one: two captures on one file
// would each cut it to their own idea of its end.
func lockFile(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return ErrLocked
	}
	return err
}
