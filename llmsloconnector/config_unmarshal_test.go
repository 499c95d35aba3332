// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
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
