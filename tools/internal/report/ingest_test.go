// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmslo/llmslo/tools/internal/otlpfile"
)

// mixedFile writes a length-prefixed protobuf file of messages of 100
// requests: engine spans and streamed client spans of three models, some
// failed, some with their chunk events out of order, so that every part
// of the report (groups, verdicts, slowest lists, tools' streams, gap
// pools) sees requests from many pieces.
func mixedFile(t *testing.T, messages int) string {
	rng := rand.New(rand.NewPCG(26, 1))
	var buf bytes.Buffer
	for m := range messages {
		td := engineSpans(50, m*100)
		chats := ptrace.NewTraces()
		for i := range 50 {
			var evs []ev
			for c := range 5 + rng.IntN(30) {
				evs = append(evs, ev{int64(80+c*7+rng.IntN(40)) * msec, int64(rng.IntN(3)) - 1})
			}
			rng.Shuffle(len(evs), func(a, b int) { evs[a], evs[b] = evs[b], evs[a] })
			chat(chats, req{id: uint64(m*100 + 50 + i + 1), start: int64(m*100+i) * msec, n: int64(len(evs)),
				end: 500 * msec, model: []string{"a", "b", "c"}[rng.IntN(3)], failed: rng.IntN(20) == 0, events: evs})
		}
		chats.ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
		require.NoError(t, otlpfile.WriteDelimited(&buf, td))
	}
	path := filepath.Join(t.TempDir(), "mixed.pb")
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o600))
	return path
}

// TestWorkersSameReport: the report read on many workers is the one read on
// one, byte for byte, over inputs of many pieces in two files.
func TestWorkersSameReport(t *testing.T) {
	files := []string{mixedFile(t, 40), mixedFile(t, 7)}
	render := func(workers int) string {
		opts := goldenOptions(t)
		opts.Workers = workers
		r, err := Run(context.Background(), opts, Inputs{Paths: files}, nil, 0)
		require.NoError(t, err)
		require.Equal(t, int64(4700), r.Requests)
		b, err := json.Marshal(r)
		require.NoError(t, err)
		return string(b)
	}
	one := render(1)
	for _, w := range []int{2, 3, 8} {
		require.Equal(t, one, render(w), "report on %d workers", w)
	}
}

// TestWorkersFirstError: a corrupt message stops the run with the error one
// worker gives, naming the file and the message, whatever the workers.
func TestWorkersFirstError(t *testing.T) {
	good := mixedFile(t, 5)
	b, err := os.ReadFile(good)
	require.NoError(t, err)
	var corrupt bytes.Buffer
	corrupt.Write(b)
	require.NoError(t, otlpfile.WriteDelimitedBytes(&corrupt, []byte{0x0a, 0x05, 0xff, 0xff, 0xff, 0xff, 0xff}))
	corrupt.Write(b)
	bad := filepath.Join(t.TempDir(), "bad.pb")
	require.NoError(t, os.WriteFile(bad, corrupt.Bytes(), 0o600))
	var want string
	for _, w := range []int{1, 2, 4} {
		opts := goldenOptions(t)
		opts.Workers = w
		_, err := Run(context.Background(), opts, Inputs{Paths: []string{good, bad, good}}, nil, 0)
		require.Error(t, err)
		if w == 1 {
			want = err.Error()
			require.Contains(t, want, bad+": OTLP protobuf message 6: ")
			continue
		}
		require.Equal(t, want, err.Error(), "%d workers", w)
	}
}
