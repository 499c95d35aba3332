// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package confcheck

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type inner struct {
	Every time.Duration `mapstructure:"every"`
}

type embedded struct {
	Timeout time.Duration `mapstructure:"timeout"`
}

type sample struct {
	embedded `mapstructure:",squash"`
	Window   *time.Duration    `mapstructure:"window"`
	Nested   *inner            `mapstructure:"nested"`
	List     []inner           `mapstructure:"list"`
	ByName   map[string]*inner `mapstructure:"by_name"`
	Ignored  time.Duration     `mapstructure:"-"`
	Count    int               `mapstructure:"count"`
	Untagged time.Duration
}

func TestDurationsWalksEveryShape(t *testing.T) {
	raw := map[string]any{
		"timeout":  5,
		"window":   "1m",
		"nested":   map[string]any{"every": 0.25},
		"list":     []any{map[string]any{"every": "2s"}, map[string]any{"every": int64(30)}},
		"by_name":  map[string]any{"b": map[string]any{"every": "x"}, "a": map[string]any{"every": uint64(7)}},
		"-":        3,
		"count":    12,
		"untagged": 40,
		"unknown":  9,
	}
	err := Durations(raw, &sample{})
	require.Error(t, err)
	assert.Equal(t, `timeout: 5 has no unit: did you mean 5s? (a bare number would be read as nanoseconds; units: ns, us, ms, s, m, h)
nested.every: 0.25 has no unit: did you mean 0.25s? (a bare number would be read as nanoseconds; units: ns, us, ms, s, m, h)
list[1].every: 30 has no unit: did you mean 30s? (a bare number would be read as nanoseconds; units: ns, us, ms, s, m, h)
by_name.a.every: 7 has no unit: did you mean 7s? (a bare number would be read as nanoseconds; units: ns, us, ms, s, m, h)
by_name.b.every: "x" is not a duration: write a number and a unit without a space, such as 500ms, 1.5s or 2m (units: ns, us, ms, s, m, h)
untagged: 40 has no unit: did you mean 40s? (a bare number would be read as nanoseconds; units: ns, us, ms, s, m, h)`, err.Error())
}

func TestDurationsAcceptsUnitsAndShapesItDoesNotKnow(t *testing.T) {
	raw := map[string]any{"timeout": "1.5s", "window": 0, "nested": "not a map", "list": map[string]any{}}
	assert.NoError(t, Durations(raw, &sample{}))
	assert.NoError(t, Durations(nil, &sample{}))
	assert.NoError(t, Durations(raw, 3))
}

// TestUnitHintByMeaning: a bare number's suggested unit follows what the
// field is: a latency bound reads 500 as milliseconds, a window, an
// interval or an expiration reads 60 as seconds.
func TestUnitHintByMeaning(t *testing.T) {
	for _, tt := range []struct {
		path    string
		written any
		want    string
	}{
		{"slos[0].ttft", 500, "did you mean 500ms?"},
		{"slos[0].ttft", 0.5, "did you mean 0.5s?"},
		{"slos[0].e2e", 2, "did you mean 2s?"},
		{"slos[0].ttft_from.max", 800, "did you mean 800ms?"},
		{"window", 60, "did you mean 60s?"},
		{"series_expiration", 300, "did you mean 300s?"},
		{"metrics_flush_interval", "15", "did you mean 15s?"},
		{"trace_assembly.wait", 6, "did you mean 6s?"},
	} {
		err := checkDuration(tt.written, latencyField(tt.path))
		require.Error(t, err, tt.path)
		assert.Contains(t, err.Error(), tt.want, tt.path)
	}
}
