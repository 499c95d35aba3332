// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
		{"does-not-exist.json"},
	} {
		cmd := newReportCommand()
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&bytes.Buffer{})
		cmd.SetArgs(args)
		assert.Error(t, cmd.Execute(), "%v", args)
	}
}
