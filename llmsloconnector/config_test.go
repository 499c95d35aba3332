// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/llmslo/llmslo/internal/metadata"
)

func TestCreateDefaultConfig(t *testing.T) {
	cfg := NewFactory().CreateDefaultConfig()
	assert.Equal(t, &Config{
		ResourceDimensions:          []string{"service.name"},
		Percentiles:                 []float64{50, 90, 99},
		Window:                      time.Minute,
		AggregationCardinalityLimit: 2000,
		SeriesExpiration:            5 * time.Minute,
		AggregationTemporality:      "cumulative",
		MetricsFlushInterval:        5 * time.Second,
		CollectorInstanceID:         true,
		AttributeValueLengthLimit:   256,
		MetricNames:                 "v1.41",
		SamplingAdjustedCounts:      true,
		MaxAdjustedCount:            100,
		Exemplars:                   ExemplarsConfig{MaxPerDataPoint: 5},
		Pressure:                    PressureConfig{Quantile: 0.9, MinRequests: 20},
	}, cfg)
	assert.NoError(t, componenttest.CheckConfigStruct(cfg))
	assert.NoError(t, confmap.Validate(cfg))
}

// loadConfig reads the named llm_slo configuration of testdata/config.yaml
// over the defaults and validates it.
func loadConfig(t testing.TB, name string) (*Config, error) {
	t.Helper()
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	id := component.NewID(metadata.Type)
	if name != "" {
		id = component.NewIDWithName(metadata.Type, name)
	}
	sub, err := cm.Sub(id.String())
	require.NoError(t, err)
	cfg := createDefaultConfig().(*Config)
	require.NoError(t, sub.Unmarshal(cfg))
	return cfg, confmap.Validate(cfg)
}

func TestLoadConfig(t *testing.T) {
	defaults := func(edit func(*Config)) *Config {
		cfg := createDefaultConfig().(*Config)
		edit(cfg)
		return cfg
	}
	unknown := "unknown"
	tests := []struct {
		name     string
		expected *Config
		// errorMessage is the whole error: each invalid case has one fault.
		errorMessage string
	}{
		{name: "", expected: defaults(func(*Config) {})},
		{
			name: "full",
			expected: &Config{
				AttributePrefix:             "llmslo.",
				Dimensions:                  []Dimension{{Name: "tenant"}, {Name: "deployment.environment.name", Default: &unknown}},
				ResourceDimensions:          []string{"service.name", "k8s.namespace.name"},
				Histogram:                   HistogramConfig{Exponential: &ExponentialConfig{MaxSize: 1024}},
				Percentiles:                 []float64{50, 95, 99.9},
				Window:                      30 * time.Second,
				AggregationCardinalityLimit: 500,
				SeriesExpiration:            10 * time.Minute,
				AggregationTemporality:      "delta",
				MetricsFlushInterval:        15 * time.Second,
				AttributeValueLengthLimit:   64,
				MetricNames:                 "next",
				MaxAdjustedCount:            20,
				Exemplars:                   ExemplarsConfig{Enabled: true, MaxPerDataPoint: 3},
				Pressure: PressureConfig{Quantile: 0.95, MinRequests: 30, SLOs: []PressureSLO{
					{Name: "interactive", TTFT: 500 * time.Millisecond, E2E: 10 * time.Second},
				}},
			},
		},
		{
			name: "explicit",
			expected: defaults(func(c *Config) {
				c.Histogram.Explicit = &ExplicitConfig{Buckets: map[string][]float64{"ttft": {0.1, 0.2, 0.5, 1, 2}, "tokens": {10, 100, 1000}}}
			}),
		},
		{
			name:     "exponential_default_size",
			expected: defaults(func(c *Config) { c.Histogram.Exponential = &ExponentialConfig{} }),
		},
		{name: "invalid_dimension_empty", errorMessage: "dimensions[0].name: must not be empty"},
		{name: "invalid_dimension_builtin", errorMessage: `dimensions[0].name: "gen_ai.request.model" is a default dimension already`},
		{name: "invalid_dimension_layer", errorMessage: `dimensions[0].name: "llm.layer" is a default dimension already`},
		{name: "invalid_dimension_twice", errorMessage: `resource_dimensions[1]: "tenant" is listed twice`},
		{name: "invalid_resource_dimension_empty", errorMessage: "resource_dimensions[0]: must not be empty"},
		{name: "invalid_both_histograms", errorMessage: "histogram: set exponential or explicit, not both"},
		{name: "invalid_max_size", errorMessage: "histogram.exponential.max_size: 1 must be between 2 and 16384 (default 160)"},
		{name: "invalid_max_size_large", errorMessage: "histogram.exponential.max_size: 20000 must be between 2 and 16384 (default 160)"},
		{name: "invalid_bucket_kind", errorMessage: `histogram.explicit.buckets: unknown kind "latency": allowed values are ttft, tpot, itl, duration, tokens`},
		{name: "invalid_buckets_order", errorMessage: "histogram.explicit.buckets.ttft: must be a non-empty, strictly increasing list"},
		{name: "invalid_buckets_empty", errorMessage: "histogram.explicit.buckets.tpot: must be a non-empty, strictly increasing list"},
		{name: "invalid_percentile", errorMessage: "percentiles: 100 must be between 0 and 100 (exclusive)"},
		{name: "invalid_percentiles_empty", errorMessage: "percentiles: must not be empty (default [50, 90, 99])"},
		{name: "invalid_window", errorMessage: "window: 0s must be a duration of at least 6ms, such as 1m"},
		{name: "invalid_cardinality_limit", errorMessage: "aggregation_cardinality_limit: -1 must be 0 (no limit) or positive"},
		{name: "invalid_series_expiration", errorMessage: "series_expiration: -1s must not be negative (0: never)"},
		{name: "invalid_temporality", errorMessage: `aggregation_temporality: "sometimes": allowed values are cumulative, delta`},
		{name: "invalid_flush_interval", errorMessage: "metrics_flush_interval: 0s must be at least 1s (default 5s): each flush emits every series"},
		{name: "invalid_flush_interval_tiny", errorMessage: "metrics_flush_interval: 1ns must be at least 1s (default 5s): each flush emits every series"},
		{name: "invalid_percentiles_fractions", errorMessage: "percentiles: [0.5, 0.99]: percentiles are given in percent: did you mean 50, 99?"},
		{name: "invalid_percentiles_one", errorMessage: "percentiles: [50, 1]: percentiles are given in percent: did you mean 50, 100?"},
		{name: "invalid_percentile_negative", errorMessage: "percentiles: -5 must be between 0 and 100 (exclusive)"},
		{name: "invalid_exemplars", errorMessage: "exemplars.max_per_data_point: 0 must be between 1 and 100 (default 5)"},
		{name: "invalid_attribute_value_length_limit", errorMessage: "attribute_value_length_limit: -1 must be 0 (no limit) or positive"},
		{name: "invalid_max_adjusted_count", errorMessage: "max_adjusted_count: 0.5 must be between 1 and 1.048576e+06 (default 100; 1 counts every sampled span as one request)"},
		{name: "invalid_max_adjusted_count_large", errorMessage: "max_adjusted_count: 2e+06 must be between 1 and 1.048576e+06 (default 100; 1 counts every sampled span as one request)"},
		{name: "invalid_metric_names", errorMessage: `metric_names: "1.41": allowed values are v1.41, next (default v1.41)`},
		{
			name: "invalid_many",
			errorMessage: "window: 0s must be a duration of at least 6ms, such as 1m\n" +
				"metrics_flush_interval: 0s must be at least 1s (default 5s): each flush emits every series",
		},
	}
	for _, tt := range tests {
		t.Run("llm_slo/"+tt.name, func(t *testing.T) {
			cfg, err := loadConfig(t, tt.name)
			if tt.errorMessage != "" {
				require.Error(t, err)
				// confmap.Validate prefixes nothing for the top-level
				// struct; the message is Validate's own.
				assert.EqualError(t, err, tt.errorMessage)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.expected, cfg)
		})
	}
}
