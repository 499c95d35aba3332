// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	llmsloprocessor "github.com/llmslo/llmslo"
	"github.com/llmslo/llmslo/tools/internal/otlpfile"
)

func TestReportCommand(t *testing.T) {
	cmd := newReportCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"--quiet", "--format", "json", "--slo", "fast:ttft=150ms,tpot=20ms", "--by", "model",
		"../../internal/report/testdata/vectors/v1.json", "../../internal/report/testdata/vectors/v3.json"})
	require.NoError(t, cmd.Execute())
	var r struct {
		Requests int64    `json:"requests"`
		GroupBy  []string `json:"group_by"`
		SLOs     []struct {
			Name   string `json:"name"`
			Groups []struct {
				Met, Violated int64
				Violations    map[string]int64 `json:"violations"`
			} `json:"groups"`
		} `json:"slos"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &r))
	assert.Equal(t, int64(2), r.Requests)
	assert.Equal(t, []string{"model"}, r.GroupBy)
	require.Len(t, r.SLOs, 1)
	// V1: TPOT 25 ms fails 20 ms; V3: TPOT 12.5 ms passes.
	assert.Equal(t, int64(1), r.SLOs[0].Groups[0].Met)
	assert.Equal(t, map[string]int64{"tpot": 1}, r.SLOs[0].Groups[0].Violations)
}

func TestReportCommandErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--format", "xml", "x.json"},
		{"--slo", "bad", "x.json"},
		{"--slo", "a:ttft=fast", "x.json"},
		{"--slo", "a:speed=1s", "x.json"},
		{"--processor", "llm_slo/x", "x.json"},
		// A real input: the flag is what fails.
		{"--capacity-min-requests", "0", "../../internal/report/testdata/vectors/v1.json"},
		{"--capacity-by", " , ", "../../internal/report/testdata/vectors/v1.json"},
		{"--slo", "a:ttft=1s,objective=0.99", "../../internal/report/testdata/vectors/v1.json"},
		{"does-not-exist.json"},
	} {
		cmd := newReportCommand()
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&bytes.Buffer{})
		cmd.SetArgs(args)
		assert.Error(t, cmd.Execute(), "%v", args)
	}
}

// TestParseSLO: --slo takes every contract constraint through the
// configuration's mapping, and an unknown one is refused naming them all.
func TestParseSLO(t *testing.T) {
	tests := []struct {
		spec string
		want llmsloprocessor.SLOConfig
		err  string
	}{
		{spec: "a:ttft=500ms,e2e=2s", want: llmsloprocessor.SLOConfig{Name: "a", TTFT: ptrDur(500 * time.Millisecond), E2E: ptrDur(2 * time.Second)}},
		{spec: "b: tpot = 15ms , itl=35ms,queue_time=50ms", want: llmsloprocessor.SLOConfig{Name: "b", TPOT: ptrDur(15 * time.Millisecond),
			ITL: ptrDur(35 * time.Millisecond), QueueTime: ptrDur(50 * time.Millisecond)}},
		{spec: "c:speed=1s", err: `unknown constraint "speed": allowed are ttft, tpot, itl, e2e, queue_time`},
		{spec: "d:ttft=1s,objective=99.5", want: llmsloprocessor.SLOConfig{Name: "d", TTFT: ptrDur(time.Second), Objective: ptrFloat(99.5)}},
		{spec: "e:ttft=1s,objective=high", err: `objective: "high" is not a number (a percentage, such as 99)`},
	}
	for _, tt := range tests {
		got, err := parseSLO(tt.spec)
		if tt.err != "" {
			assert.EqualError(t, err, tt.err, tt.spec)
			continue
		}
		require.NoError(t, err, tt.spec)
		assert.Equal(t, tt.want, got, tt.spec)
	}
}

func ptrDur(d time.Duration) *time.Duration { return &d }

// TestReportSkipsCorruptRecord: a record that does not decode in the
// middle of a length-prefixed input is skipped with a warning naming it,
// and the report counts the requests around it, with one worker or
// several. Before, it failed the whole report.
func TestReportSkipsCorruptRecord(t *testing.T) {
	var in []byte
	for _, v := range []string{"v1", "", "v3"} {
		msg := []byte{0x0a, 0x06, 0x12, 0x04, 0x12, 0x02, 0x4a, 0x05} // a span whose attribute runs past its end
		if v != "" {
			var err error
			require.NoError(t, otlpfile.ReadFile("../../internal/report/testdata/vectors/"+v+".json", nil, func(td ptrace.Traces) error {
				msg, err = (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
				return err
			}))
		}
		in = otlpfile.AppendDelimited(in, msg)
	}
	path := filepath.Join(t.TempDir(), "traces.pb")
	require.NoError(t, os.WriteFile(path, in, 0o600))
	for _, workers := range []string{"1", "2"} {
		cmd := newReportCommand()
		var out, stderr bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetErr(&stderr)
		cmd.SetArgs([]string{"--quiet", "--workers", workers, "--format", "json", path})
		require.NoError(t, cmd.Execute(), stderr.String())
		var r struct {
			Requests int64 `json:"requests"`
		}
		require.NoError(t, json.Unmarshal(out.Bytes(), &r))
		assert.Equal(t, int64(2), r.Requests, "workers %s", workers)
		assert.Equal(t, "llmslo report: warning: "+path+": OTLP protobuf message 2: malformed protobuf: unexpected EOF: skipped\n", stderr.String(), "workers %s", workers)
	}
}

func ptrFloat(f float64) *float64 { return &f }

// TestReportCapacityFlags: --capacity-by and --capacity-min-requests reach
// the report, and --slo's objective its SLO.
func TestReportCapacityFlags(t *testing.T) {
	cmd := newReportCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"--quiet", "--format", "json", "--slo", "fast:ttft=150ms,objective=99", "--capacity-by", "k8s.pod.name, host.name",
		"--capacity-min-requests", "5", "../../internal/report/testdata/vectors/v1.json"})
	require.NoError(t, cmd.Execute())
	var r struct {
		CapacityBy  []string `json:"capacity_by"`
		CapacityMin int      `json:"capacity_min_requests"`
		SLOs        []struct {
			Objective *float64 `json:"objective"`
		} `json:"slos"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &r))
	assert.Equal(t, []string{"k8s.pod.name", "host.name"}, r.CapacityBy)
	assert.Equal(t, 5, r.CapacityMin)
	require.Len(t, r.SLOs, 1)
	assert.Equal(t, ptrFloat(0.99), r.SLOs[0].Objective)
}
