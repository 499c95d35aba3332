// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
)

func TestUnmarshalDurationsNeedAUnit(t *testing.T) {
	tests := []struct {
		name    string
		raw     map[string]any
		wantErr string
		check   func(*testing.T, *Config)
	}{
		{name: "flush interval without a unit", raw: map[string]any{"metrics_flush_interval": 5},
			wantErr: "metrics_flush_interval: 5 has no unit: did you mean 5s?"},
		{name: "fractional window", raw: map[string]any{"window": 0.5},
			wantErr: "window: 0.5 has no unit: did you mean 0.5s?"},
		{name: "expiration as a bare string", raw: map[string]any{"series_expiration": "300"},
			wantErr: "series_expiration:"},
		{name: "units accepted", raw: map[string]any{"metrics_flush_interval": "2s", "window": "1m", "series_expiration": "10m"},
			check: func(t *testing.T, c *Config) {
				assert.Equal(t, 2*time.Second, c.MetricsFlushInterval)
				assert.Equal(t, time.Minute, c.Window)
				assert.Equal(t, 10*time.Minute, c.SeriesExpiration)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			err := confmap.NewFromStringMap(tt.raw).Unmarshal(cfg)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			tt.check(t, cfg)
		})
	}
}

// TestUnmarshalShape: an unknown key is named with its path and the
// nearest key ("did you mean"), or the keys of its place; a token count
// written with a fraction is refused rather than truncated; the removed
// token_aware_itl is an unknown key.
func TestUnmarshalShape(t *testing.T) {
	for _, tt := range []struct {
		name string
		raw  map[string]any
		err  string
	}{
		{name: "threshold slip", raw: map[string]any{"pressure": map[string]any{"slos": []any{map[string]any{"name": "a", "tffT": "1s"}}}},
			err: "pressure.slos[0].tffT: unknown key: did you mean ttft?"},
		{name: "slo for slos", raw: map[string]any{"pressure": map[string]any{"slo": []any{"interactive"}}},
			err: "pressure.slo: unknown key: did you mean slos?"},
		{name: "top-level slip", raw: map[string]any{"dimension": []any{}},
			err: "dimension: unknown key: did you mean dimensions?"},
		{name: "removed option", raw: map[string]any{"token_aware_itl": true},
			err: "token_aware_itl: unknown key: the keys here are aggregation_cardinality_limit, aggregation_temporality, attribute_prefix, " +
				"attribute_value_length_limit, collector_instance_id, dimensions, exemplars, histogram, input_token_classes, max_adjusted_count, " +
				"metric_names, metrics_flush_interval, percentiles, pressure, resource_dimensions, sampling_adjusted_counts, series_expiration, window"},
		{name: "fractional token bound", raw: map[string]any{"input_token_classes": []any{1.5, 4096}},
			err: "input_token_classes[0]: 1.5 is not a whole number"},
		{name: "explicit bucket kinds are map keys", raw: map[string]any{"histogram": map[string]any{"explicit": map[string]any{"buckets": map[string]any{"ttft": []any{0.1, 1}}}}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			err := confmap.NewFromStringMap(tt.raw).Unmarshal(cfg)
			if tt.err == "" {
				assert.NoError(t, err)
				return
			}
			// The decoder prefixes "decoding failed due to the following
			// error(s)"; the message is ours, whole.
			require.Error(t, err)
			assert.True(t, strings.HasSuffix(err.Error(), " "+tt.err), err.Error())
		})
	}
}
