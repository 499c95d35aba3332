// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
)

// TestInputClassBoundaries: the bounds are inclusive upper bounds (as a
// histogram's le), past the last is gt_<last>, no count is unknown.
func TestInputClassBoundaries(t *testing.T) {
	ic := newInputClasses([]int64{1024, 4096, 16384})
	assert.Equal(t, []string{"le_1024", "le_4096", "le_16384", "gt_16384", "unknown"}, ic.names)
	for _, tt := range []struct {
		tokens float64
		has    bool
		want   string
	}{
		{0, true, "le_1024"},
		{1, true, "le_1024"},
		{1024, true, "le_1024"},
		{1025, true, "le_4096"},
		{4096, true, "le_4096"},
		{4097, true, "le_16384"},
		{16384, true, "le_16384"},
		{16385, true, "gt_16384"},
		{1 << 24, true, "gt_16384"},
		{0, false, "unknown"},
		{2000, false, "unknown"},
	} {
		assert.Equal(t, tt.want, ic.names[ic.of(tt.tokens, tt.has)], "%v tokens (known: %v)", tt.tokens, tt.has)
	}
	assert.Nil(t, newInputClasses(nil), "off by default")
}

// TestInputClassesFailedSpan: a failed span keeps its class (the latency
// is dropped, the input token count was read first).
func TestInputClassesFailedSpan(t *testing.T) {
	o := observation{}
	o.inputClass = 2
	o.failed()
	assert.Equal(t, uint8(2), o.inputClass)
}

// TestValidateNewOptions: input_token_classes and pressure_quantile, each
// error naming its field and the offending value.
func TestValidateNewOptions(t *testing.T) {
	many := make([]int64, 17)
	for i := range many {
		many[i] = int64(i + 1)
	}
	for _, tt := range []struct {
		name string
		set  func(*Config)
		want string // "" : valid
	}{
		{"classes off", func(*Config) {}, ""},
		{"classes", func(c *Config) { c.InputTokenClasses = []int64{1024, 4096, 16384} }, ""},
		{"one class", func(c *Config) { c.InputTokenClasses = []int64{1} }, ""},
		{"sixteen", func(c *Config) { c.InputTokenClasses = many[:16] }, ""},
		{"seventeen", func(c *Config) { c.InputTokenClasses = many }, "input_token_classes: 17 boundaries, at most 16: each class multiplies the series"},
		{"zero", func(c *Config) { c.InputTokenClasses = []int64{0, 10} }, "input_token_classes[0]: 0 must be a positive number of tokens"},
		{"negative", func(c *Config) { c.InputTokenClasses = []int64{-5} }, "input_token_classes[0]: -5 must be a positive number of tokens"},
		{"at the token bound", func(c *Config) { c.InputTokenClasses = []int64{1024, 1 << 24} }, ""},
		{"above the token bound", func(c *Config) { c.InputTokenClasses = []int64{1024, 1<<24 + 1} },
			"input_token_classes[1]: 16777217 must be at most 16777216 (2^24), the largest input token count a request may have (a larger count is rejected): a bound above it splits nothing"},
		{"repeated", func(c *Config) { c.InputTokenClasses = []int64{10, 10} }, "input_token_classes[1]: 10 must be greater than 10 before it (strictly increasing)"},
		{"decreasing", func(c *Config) { c.InputTokenClasses = []int64{4096, 1024} }, "input_token_classes[1]: 1024 must be greater than 4096 before it (strictly increasing)"},
		{"label as dimension", func(c *Config) {
			c.InputTokenClasses = []int64{10}
			c.Dimensions = []Dimension{{Name: "llm.input_class"}}
		}, `dimensions[0].name: "llm.input_class" is input_token_classes' label already`},
		{"label as dimension, classes off", func(c *Config) { c.Dimensions = []Dimension{{Name: "llm.input_class"}} }, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			tt.set(cfg)
			err := cfg.Validate()
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			require.EqualError(t, err, tt.want)
		})
	}
}

// TestInputClassesUnmarshal: the option as a collector configuration
// writes it.
func TestInputClassesUnmarshal(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	require.NoError(t, confmap.NewFromStringMap(map[string]any{"input_token_classes": []any{1024, 4096, 16384}}).Unmarshal(cfg))
	assert.Equal(t, []int64{1024, 4096, 16384}, cfg.InputTokenClasses)
	require.NoError(t, cfg.Validate())
}
