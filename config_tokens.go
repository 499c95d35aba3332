// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloprocessor

import (
	"fmt"
	"math"
	"strconv"

	"github.com/llmslo/llmslo/internal/contract"
	"github.com/llmslo/llmslo/internal/slo"
)

// TokenBoundsConfig bounds a token count, inclusive at both ends; either
// end may be omitted, not both. The bounds are numbers rather than integers
// in Go so that a fractional one (max: 1.5) is refused: the collector's
// decoder would truncate it into an int without a word.
type TokenBoundsConfig struct {
	Min *float64 `mapstructure:"min"`
	Max *float64 `mapstructure:"max"`

	_ struct{}
}

// validate checks the bounds; field is "slos[i].selector.input_tokens" or
// its output_tokens. A nil b bounds nothing.
func (b *TokenBoundsConfig) validate(field string) []error {
	if b == nil {
		return nil
	}
	if b.Min == nil && b.Max == nil {
		return []error{fmt.Errorf("%s: set min, max or both (inclusive token counts), or remove it", field)}
	}
	var errs []error
	for _, e := range []struct {
		name string
		v    *float64
	}{{"min", b.Min}, {"max", b.Max}} {
		// Beyond contract.MaxTokens a count is taken as corrupt, so a bound
		// there could only select nothing (min) or mean nothing (max).
		if e.v != nil && (!(*e.v >= 0 && *e.v <= contract.MaxTokens) || *e.v != math.Trunc(*e.v)) {
			errs = append(errs, fmt.Errorf("%s.%s: %s must be a whole number of tokens from 0 to %d", field, e.name, tokens(*e.v), contract.MaxTokens))
		}
	}
	if len(errs) == 0 && b.Min != nil && b.Max != nil && *b.Min > *b.Max {
		errs = append(errs, fmt.Errorf("%s: min %s is above max %s, so the SLO would select no request", field, tokens(*b.Min), tokens(*b.Max)))
	}
	return errs
}

// compile gives the selector's range; validated, so the bounds are whole.
func (b *TokenBoundsConfig) compile() slo.TokenRange {
	if b == nil {
		return slo.TokenRange{}
	}
	r := slo.TokenRange{Set: true, Max: math.MaxInt64}
	if b.Min != nil {
		r.Min = int64(*b.Min)
	}
	if b.Max != nil {
		r.Max = int64(*b.Max)
	}
	return r
}

// describe appends the bounds to sel as Describe says them: "input_tokens
// <= 1024", "input_tokens >= 1025", "input_tokens 100 to 200".
func (b *TokenBoundsConfig) describe(name string, sel []string) []string {
	switch {
	case b == nil || b.Min == nil && b.Max == nil:
		return sel
	case b.Min == nil:
		return append(sel, name+" <= "+tokens(*b.Max))
	case b.Max == nil:
		return append(sel, name+" >= "+tokens(*b.Min))
	}
	return append(sel, name+" "+tokens(*b.Min)+" to "+tokens(*b.Max))
}

// tokens spells a count as written (1024, not 1.024e+03).
func tokens(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
