// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloprocessor

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/llmslo/llmslo/internal/slo"
)

func tok(v float64) *float64 { return &v }

// TestTokenBoundsValidate pins every error, exactly: the field named, what
// was written, and nothing reported for a valid bound.
func TestTokenBoundsValidate(t *testing.T) {
	const f = "slos[0].selector.input_tokens"
	tests := []struct {
		name string
		b    *TokenBoundsConfig
		want []string
	}{
		{"unset", nil, nil},
		{"max only", &TokenBoundsConfig{Max: tok(1024)}, nil},
		{"min only", &TokenBoundsConfig{Min: tok(1025)}, nil},
		{"zero to zero", &TokenBoundsConfig{Min: tok(0), Max: tok(0)}, nil},
		{"equal bounds", &TokenBoundsConfig{Min: tok(7), Max: tok(7)}, nil},
		{"at the corrupt bound", &TokenBoundsConfig{Max: tok(1 << 24)}, nil},
		{"empty", &TokenBoundsConfig{}, []string{f + ": set min, max or both (inclusive token counts), or remove it"}},
		{"negative min", &TokenBoundsConfig{Min: tok(-1)}, []string{f + ".min: -1 must be a whole number of tokens from 0 to 16777216"}},
		{"fractional max", &TokenBoundsConfig{Max: tok(1.5)}, []string{f + ".max: 1.5 must be a whole number of tokens from 0 to 16777216"}},
		{"beyond the corrupt bound", &TokenBoundsConfig{Min: tok(1<<24 + 1)}, []string{f + ".min: 16777217 must be a whole number of tokens from 0 to 16777216"}},
		{"NaN", &TokenBoundsConfig{Max: tok(math.NaN())}, []string{f + ".max: NaN must be a whole number of tokens from 0 to 16777216"}},
		{"min above max", &TokenBoundsConfig{Min: tok(1025), Max: tok(1024)}, []string{f + ": min 1025 is above max 1024, so the SLO would select no request"}},
		{"both bad, no order check", &TokenBoundsConfig{Min: tok(-5), Max: tok(-9)}, []string{
			f + ".min: -5 must be a whole number of tokens from 0 to 16777216",
			f + ".max: -9 must be a whole number of tokens from 0 to 16777216",
		}},
	}
	for _, tt := range tests {
		var got []string
		for _, err := range tt.b.validate(f) {
			got = append(got, err.Error())
		}
		assert.Equal(t, tt.want, got, tt.name)
	}
}

// TestTokenBoundsCompile: an omitted end is open, and no bound is unset.
func TestTokenBoundsCompile(t *testing.T) {
	tests := []struct {
		name string
		b    *TokenBoundsConfig
		want slo.TokenRange
	}{
		{"unset", nil, slo.TokenRange{}},
		{"max only", &TokenBoundsConfig{Max: tok(1024)}, slo.TokenRange{Set: true, Min: 0, Max: 1024}},
		{"min only", &TokenBoundsConfig{Min: tok(1025)}, slo.TokenRange{Set: true, Min: 1025, Max: math.MaxInt64}},
		{"both", &TokenBoundsConfig{Min: tok(1), Max: tok(50)}, slo.TokenRange{Set: true, Min: 1, Max: 50}},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.b.compile(), tt.name)
	}
}

// TestDescribeTokens: the rules' descriptions and the idle warning say the
// bounds, after the other parts.
func TestDescribeTokens(t *testing.T) {
	tests := []struct {
		name string
		sel  SelectorConfig
		want string
	}{
		{"none", SelectorConfig{}, ""},
		{"input max", SelectorConfig{InputTokens: &TokenBoundsConfig{Max: tok(1024)}}, "input_tokens <= 1024"},
		{"input min", SelectorConfig{InputTokens: &TokenBoundsConfig{Min: tok(1025)}}, "input_tokens >= 1025"},
		{"output both", SelectorConfig{OutputTokens: &TokenBoundsConfig{Min: tok(100), Max: tok(200)}}, "output_tokens 100 to 200"},
		{"with other parts", SelectorConfig{Layer: "server", InputTokens: &TokenBoundsConfig{Max: tok(1024)}, OutputTokens: &TokenBoundsConfig{Min: tok(10000000)}},
			"layer server; input_tokens <= 1024; output_tokens >= 10000000"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.sel.Describe(), tt.name)
	}
}
