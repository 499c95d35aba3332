// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMakeRunDemo runs make run's script as a person piping it to a file
// does (no terminal, no $COLUMNS), on a short load, and checks what they
// read: every line fits 120 columns (the narrow layout, not the wide one a
// pipe took), each live table has its own elapsed time and the final one
// comes once (the last live table was printed twice), and the report at
// the end counts the generated requests only, the final table's total (the
// sample spans were mixed into its groups).
func TestMakeRunDemo(t *testing.T) {
	collectorBinary(t) // the script runs dist/otelcol-llmslo
	cmd := exec.Command("scripts/demo.sh")
	cmd.Dir = "../.."
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "COLUMNS=") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "DURATION=8s", "RATE=10", "INCIDENT=")
	b, err := cmd.CombinedOutput()
	out := string(b)
	require.NoError(t, err, "%s", out)

	for _, line := range strings.Split(out, "\n") {
		assert.LessOrEqual(t, utf8.RuneCountInString(line), 120, "%q", line)
		assert.NotEqual(t, "--", line, "grep's separator")
	}
	titles := regexp.MustCompile(`(?m)^== (live|final), (\d+)s:`).FindAllStringSubmatch(out, -1)
	require.NotEmpty(t, titles, out)
	seen := map[string]bool{}
	for i, m := range titles {
		assert.False(t, seen[m[2]], "two tables at %ss", m[2])
		seen[m[2]] = true
		assert.Equal(t, i == len(titles)-1, m[1] == "final", "only the last table is final: %v", titles)
	}
	assert.Equal(t, "8", titles[len(titles)-1][2])

	final := out[strings.LastIndex(out, "== final"):]
	rows := strings.Split(final[strings.Index(final, "\n")+1:], "\n")
	require.True(t, strings.HasPrefix(rows[0], "MODEL "), "the narrow layout: %q", rows[0])
	generated := 0
	for _, row := range rows[1:] {
		if strings.TrimSpace(row) == "" {
			break
		}
		n, err := strconv.Atoi(strings.Fields(row)[2])
		require.NoError(t, err, "%q", row)
		generated += n
	}
	m := regexp.MustCompile(`(?m)^SLO interactive:[^\n]*\n=+\n[^\n]*\n[^\n]*\n  all +(\d+) `).FindStringSubmatch(out)
	require.NotNil(t, m, "the report's SLO table:\n%s", out)
	assert.Equal(t, strconv.Itoa(generated), m[1], "the report counts the generated requests only")
}
