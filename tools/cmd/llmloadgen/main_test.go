// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"flag"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmslo/llmslo/tools/internal/loadgen"
)

func parseIncident(t *testing.T, args ...string) (*loadgen.Incident, error) {
	t.Helper()
	fs := flag.NewFlagSet("llmloadgen", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var f loadgen.IncidentFlags
	f.Register(fs)
	require.NoError(t, fs.Parse(args))
	return f.Incident(fs)
}

func TestIncidentFlags(t *testing.T) {
	const m = "qwen2.5-1.5b-instruct"
	for _, c := range []struct {
		args []string
		want *loadgen.Incident
		err  string
	}{
		{args: nil},
		{args: []string{"-incident-model", m, "-incident-at", "20s", "-incident-ttft-factor", "20"},
			want: &loadgen.Incident{Model: m, After: 20 * time.Second, Factor: 20, Kind: loadgen.IncidentTTFT}},
		{args: []string{"-incident-model", m}, want: &loadgen.Incident{Model: m, Factor: 10, Kind: loadgen.IncidentTTFT}},
		{args: []string{"-incident-model", m, "-incident-kind", "queue"}, want: &loadgen.Incident{Model: m, Delay: time.Second, Kind: loadgen.IncidentQueue}},
		{args: []string{"-incident-model", m, "-incident-kind", "queue", "-incident-queue-delay", "2s"},
			want: &loadgen.Incident{Model: m, Delay: 2 * time.Second, Kind: loadgen.IncidentQueue}},
		{args: []string{"-incident-model", m, "-incident-kind", "long_prompt", "-incident-prompt-factor", "5"},
			want: &loadgen.Incident{Model: m, Factor: 5, Kind: loadgen.IncidentLongPrompt}},
		{args: []string{"-incident-model", m, "-incident-kind", "network"},
			want: &loadgen.Incident{Model: m, Delay: 300 * time.Millisecond, Kind: loadgen.IncidentNetwork}},
		{args: []string{"-incident-kind", "queue"}, err: "-incident-kind needs -incident-model, the model whose requests the incident changes"},
		{args: []string{"-incident-ttft-factor", "3"}, err: "-incident-ttft-factor needs -incident-model, the model whose requests the incident changes"},
		{args: []string{"-incident-model", m, "-incident-kind", "gpu"},
			err: `-incident-kind: unknown incident kind "gpu": known are ttft, queue, long_prompt, network`},
		{args: []string{"-incident-model", m, "-incident-kind", "network", "-incident-queue-delay", "1s"},
			err: "-incident-queue-delay applies to -incident-kind queue, not network"},
		{args: []string{"-incident-model", m, "-incident-prompt-factor", "4"},
			err: "-incident-prompt-factor applies to -incident-kind long_prompt, not ttft"},
		{args: []string{"-incident-model", m, "-incident-at", "-1s"}, err: "-incident-at must not be negative, got -1s"},
		{args: []string{"-incident-model", m, "-incident-ttft-factor", "0"}, err: "-incident-ttft-factor must be positive, got 0"},
		{args: []string{"-incident-model", m, "-incident-kind", "long_prompt", "-incident-prompt-factor", "-2"},
			err: "-incident-prompt-factor must be positive, got -2"},
		{args: []string{"-incident-model", m, "-incident-kind", "network", "-incident-network-delay", "0s"},
			err: "-incident-network-delay must be positive, got 0s"},
	} {
		got, err := parseIncident(t, c.args...)
		if c.err != "" {
			assert.EqualError(t, err, c.err, "%q", c.args)
			continue
		}
		require.NoError(t, err, "%q", c.args)
		assert.Equal(t, c.want, got, "%q", c.args)
	}
}

func TestUsage(t *testing.T) {
	fs := flag.NewFlagSet("llmloadgen", flag.ContinueOnError)
	var out bytes.Buffer
	fs.SetOutput(&out)
	var f loadgen.IncidentFlags
	f.Register(fs)
	usage(fs)
	for _, k := range loadgen.IncidentKinds {
		assert.Contains(t, out.String(), "\n  "+string(k)+" ", "the kind %s is explained", k)
	}
	for _, s := range loadgen.AllShapes {
		assert.Contains(t, out.String(), "\n  "+string(s)+" ", "the shape %s is explained", s)
	}
	assert.Contains(t, out.String(), "-incident-network-delay duration")
}
