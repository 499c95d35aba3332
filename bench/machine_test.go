// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux

package bench

import (
	"syscall"
	"testing"
)

// BenchmarkFreshPages measures what the machine charges for the first
// touch of a fresh page: each op maps 16 MiB of anonymous memory, writes a
// byte in each 4 KiB page and unmaps it. The Go heap pays this whenever it
// grows or reuses memory its scavenger returned, and decoding OTLP grows
// it for every span, event and attribute. ns/page is wall time per page:
// run with -cpu 1,2, it halves when two threads of one process fault in
// parallel.
func BenchmarkFreshPages(b *testing.B) {
	const size, page = 16 << 20, 4096
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			mem, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
			if err != nil {
				b.Error(err)
				return
			}
			for i := 0; i < size; i += page {
				mem[i] = 1
			}
			if err := syscall.Munmap(mem); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(size/page), "ns/page")
}
