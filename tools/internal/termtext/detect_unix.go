// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux || darwin

package termtext

import (
	"os"
	"syscall"
	"unsafe"
)

// terminalWidth is the column count of the terminal f is, if it is one.
func terminalWidth(f *os.File) (int, bool) {
	var ws struct{ rows, cols, xpixel, ypixel uint16 }
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), uintptr(syscall.TIOCGWINSZ), uintptr(unsafe.Pointer(&ws)))
	if errno != 0 || ws.cols == 0 {
		return 0, false
	}
	return int(ws.cols), true
}
