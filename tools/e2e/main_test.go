// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// launchRSSEnv, when set to a file name, makes the test binary a launcher
// instead: it runs the command of its arguments and writes to that file
// its own peak RSS before the start and the command's, in KiB. A child's
// peak RSS (its rusage) starts from the peak of the process that started
// it (Go starts children with vfork, whose exec records the parent's
// high-water mark as the child's), so a command started by this test
// process, which by then has held hundreds of MiB, would be charged for
// them; a fresh launcher holds a few.
const launchRSSEnv = "LLMSLO_E2E_LAUNCH_RSS"

func TestMain(m *testing.M) {
	if out := os.Getenv(launchRSSEnv); out != "" {
		os.Exit(launch(out, os.Args[1:]))
	}
	os.Exit(m.Run())
}

func launch(out string, args []string) int {
	floor := ownPeakKiB()
	cmd := exec.Command(args[0], args[1:]...) //nolint:gosec // the test's own command line
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		fmt.Fprintln(os.Stderr, "launch:", err)
		return 125
	}
	peak := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss
	if err := os.WriteFile(out, fmt.Appendf(nil, "%d %d\n", floor, peak), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "launch:", err)
		return 125
	}
	return cmd.ProcessState.ExitCode()
}

// ownPeakKiB is this process's VmHWM, 0 if unknown.
func ownPeakKiB() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb
		}
	}
	return 0
}

// launched is a command run through the launcher, with its peak RSS.
func launched(t *testing.T, name string, args ...string) (cmd *exec.Cmd, peakRSS func() (floorMiB, peakMiB float64)) {
	t.Helper()
	out := t.TempDir() + "/rss"
	cmd = exec.Command(os.Args[0], append([]string{name}, args...)...) //nolint:gosec // the test binary itself
	cmd.Env = append(os.Environ(), launchRSSEnv+"="+out)
	return cmd, func() (float64, float64) {
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatalf("the launcher wrote no RSS: %v", err)
		}
		var floor, peak float64
		if _, err := fmt.Sscan(string(b), &floor, &peak); err != nil {
			t.Fatalf("launcher RSS %q: %v", b, err)
		}
		return floor / 1024, peak / 1024
	}
}
