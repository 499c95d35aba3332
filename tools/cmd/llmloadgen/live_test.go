// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmslo/llmslo/tools/internal/loadgen"
)

// TestLiveIncident: the live comparison takes the incident flags for the
// models it sends, and refuses a network incident without joined spans,
// where it cannot show.
func TestLiveIncident(t *testing.T) {
	const m = "llama-3.1-8b-instruct"
	tests := []struct {
		args    []string
		want    *loadgen.Incident
		wantErr string
	}{
		{args: nil, want: nil},
		{args: []string{"-incident-model", m, "-incident-kind", "queue", "-incident-at", "10s"},
			want: &loadgen.Incident{Model: m, After: 10 * time.Second, Delay: time.Second, Kind: loadgen.IncidentQueue}},
		{args: []string{"-incident-model", m, "-incident-kind", "network"}, wantErr: "-incident-kind network needs client spans joined to their engine spans"},
		{args: []string{"-incident-model", m, "-incident-kind", "network", "-shapes", "joined=1"},
			want: &loadgen.Incident{Model: m, Delay: 300 * time.Millisecond, Kind: loadgen.IncidentNetwork}},
		{args: []string{"-incident-model", "gpt-4o", "-incident-kind", "queue"},
			wantErr: `-incident-model "gpt-4o": -models sends [llama-3.1-70b-instruct llama-3.1-8b-instruct qwen2.5-1.5b-instruct]`},
		{args: []string{"-incident-kind", "queue"}, wantErr: "-incident-kind needs -incident-model"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.args), func(t *testing.T) {
			fs := flag.NewFlagSet("llmloadgen", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			var f flags
			f.register(fs)
			require.NoError(t, fs.Parse(tt.args))
			cfg, err := f.config(fs)
			if err == nil {
				err = liveIncident(cfg)
			}
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, cfg.Incident)
		})
	}
}

// TestRefreshLoop: a live table per tick while requests arrive, none for
// the ticks while the generator waits for its last requests (they repeated
// the last live table under the same elapsed time), then the final one.
func TestRefreshLoop(t *testing.T) {
	const duration = 30 * time.Second
	ticks := make(chan time.Time)
	done := make(chan error, 1)
	start := time.Now().Add(-time.Minute) // the run is over
	var shown []string
	show := func(elapsed time.Duration, final bool) {
		shown = append(shown, fmt.Sprintf("%s %v", elapsed, final))
	}
	errc := make(chan error, 1)
	go func() {
		errc <- refreshLoop(done, ticks, start, duration, func() {}, show)
	}()
	// The ticks of a 30 s run every 5 s, and two while the last requests end.
	for s := 5; s <= 40; s += 5 {
		ticks <- start.Add(time.Duration(s) * time.Second)
	}
	done <- nil
	require.NoError(t, <-errc)
	assert.Equal(t, []string{"5s false", "10s false", "15s false", "20s false", "25s false", "30s true"}, shown)

	done <- errors.New("export failed")
	assert.EqualError(t, refreshLoop(done, ticks, start, duration, func() {}, show), "export failed")
}
