// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"flag"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmslo/llmslo/internal/loadgen"
)

// TestDemoIncident: the demo takes the generator's incident flags for its
// own models, and refuses a network incident it cannot show.
func TestDemoIncident(t *testing.T) {
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
		{args: []string{"-incident-model", "gpt-4o", "-incident-kind", "queue"}, wantErr: `-incident-model "gpt-4o": the demo sends [llama-3.1-70b-instruct llama-3.1-8b-instruct qwen2.5-1.5b-instruct]`},
		{args: []string{"-incident-kind", "queue"}, wantErr: "-incident-kind needs -incident-model"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.args), func(t *testing.T) {
			fs := flag.NewFlagSet("llmslo-demo", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			var f loadgen.IncidentFlags
			f.Register(fs)
			require.NoError(t, fs.Parse(tt.args))
			got, err := demoIncident(&f, fs)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}
