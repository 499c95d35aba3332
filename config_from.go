// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloprocessor

import (
	"fmt"

	"github.com/llmslo/llmslo/internal/preset"
	"github.com/llmslo/llmslo/internal/slo"
)

// ThresholdFrom is a per-request threshold: a span attribute (a number, a
// decimal string, or a one-element string array, as the HTTP conventions
// record request headers) in Unit (s, ms, us or ns; default s). When the
// span carries a valid value it is the request's threshold; absent, the
// configured threshold applies (none: the constraint does not apply);
// malformed, the configured one applies or, without one, the constraint is
// unknown, and llm.metrics.error reports slo_threshold:invalid_value.
type ThresholdFrom struct {
	Key  string `mapstructure:"key"`
	Unit string `mapstructure:"unit"`

	_ struct{}
}

// from lists the per-request sources in the order of slo.Names.
func (s *SLOConfig) from() []*ThresholdFrom {
	return []*ThresholdFrom{s.TTFTFrom, s.TPOTFrom, s.ITLFrom, s.E2EFrom, s.QueueTimeFrom}
}

// validateFrom checks the per-request sources and returns how many are set.
func (s *SLOConfig) validateFrom(field string) ([]error, int) {
	var errs []error
	set := 0
	names := slo.Names()
	for i, f := range s.from() {
		if f == nil {
			continue
		}
		set++
		if f.Key == "" {
			errs = append(errs, fmt.Errorf("%s.%s_from.key: must not be empty", field, names[i]))
		}
		if _, err := numericUnit(f.Unit); err != nil {
			errs = append(errs, fmt.Errorf("%s.%s_from.unit: %w", field, names[i], err))
		}
	}
	return errs, set
}

// numericUnit parses a unit of a number: a duration string or a timestamp
// cannot be a threshold.
func numericUnit(name string) (preset.Unit, error) {
	u, err := preset.ParseUnit(name)
	if err == nil && (u == preset.Duration || u == preset.Timestamp) {
		err = fmt.Errorf("%q: allowed values are \"s\", \"ms\", \"us\", \"ns\"", name)
	}
	return u, err
}

// compileFrom gives the compiled SLO its per-request sources, if any; an
// SLO without them keeps From nil and judges as before.
func (s *SLOConfig) compileFrom(o *slo.SLO) *slo.SLO {
	var src slo.Sources
	found := false
	for i, f := range s.from() {
		if f == nil {
			continue
		}
		u, _ := numericUnit(f.Unit) // validated
		src[i] = &slo.FromAttribute{Key: f.Key, Scale: u.Seconds(1)}
		found = true
	}
	if found {
		o.From = &src
	}
	return o
}
