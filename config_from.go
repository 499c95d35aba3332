// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloprocessor

import (
	"fmt"
	"slices"
	"time"

	"github.com/llmslo/llmslo/internal/contract"
	"github.com/llmslo/llmslo/internal/derive"
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
//
// The attribute is the sender's word, so a request may only tighten the
// configured threshold, or loosen it up to Max: a value beyond that falls
// back as a malformed one does, reported as slo_threshold:out_of_range.
type ThresholdFrom struct {
	Key  string `mapstructure:"key"`
	Unit string `mapstructure:"unit"`
	// Max is the loosest threshold a request may ask for; default the
	// configured threshold. One of the two is required.
	Max *time.Duration `mapstructure:"max"`

	_ struct{}
}

// from lists the per-request sources in the order of slo.Names. The
// [...] literal must have exactly contract.NumConstraints entries to be
// returned as the result type: a constraint added to the contract fails to
// compile here until its field is listed, rather than never being read.
func (s *SLOConfig) from() [contract.NumConstraints]*ThresholdFrom {
	return [...]*ThresholdFrom{s.TTFTFrom, s.TPOTFrom, s.ITLFrom, s.E2EFrom, s.QueueTimeFrom}
}

// thresholdFields lists the configured thresholds' fields in the order of
// slo.Names, guarded as from is: the only list of them, which configured()
// and SetThreshold read.
func (s *SLOConfig) thresholdFields() [contract.NumConstraints]**time.Duration {
	return [...]**time.Duration{&s.TTFT, &s.TPOT, &s.ITL, &s.E2E, &s.QueueTime}
}

// configured lists the configured thresholds in the order of slo.Names.
// validate, limits, bounds and compileFrom all read them through it.
func (s *SLOConfig) configured() [contract.NumConstraints]*time.Duration {
	var out [contract.NumConstraints]*time.Duration
	for i, f := range s.thresholdFields() {
		out[i] = *f
	}
	return out
}

// SetThreshold sets the threshold of the constraint named constraint (a
// contract.Constraints name), for the llmslo command's --slo flag, which
// then accepts every constraint the configuration does. It reports false
// for an unknown name.
func (s *SLOConfig) SetThreshold(constraint string, d time.Duration) bool {
	i := slices.Index(contract.Constraints[:], constraint)
	if i < 0 {
		return false
	}
	*s.thresholdFields()[i] = &d
	return true
}

// validateFrom checks the per-request sources and returns how many are set.
func (s *SLOConfig) validateFrom(field string) ([]error, int) {
	var errs []error
	set := 0
	names, configured := slo.Names(), s.configured()
	for i, f := range s.from() {
		if f == nil {
			continue
		}
		set++
		at := fmt.Sprintf("%s.%s_from", field, names[i])
		if f.Key == "" {
			errs = append(errs, fmt.Errorf("%s.key: must not be empty", at))
		}
		if _, err := numericUnit(f.Unit); err != nil {
			errs = append(errs, fmt.Errorf("%s.unit: %w", at, err))
		}
		errs = append(errs, validateFromMax(at, names[i], f.Max, configured[i])...)
	}
	return errs, set
}

// validateFromMax checks the loosest threshold a request may ask for:
// without it and without a configured threshold, any sender could set its
// own SLO up to a week.
func validateFromMax(at, name string, limit, configured *time.Duration) []error {
	switch {
	case limit == nil && configured == nil:
		return []error{fmt.Errorf("%s.max: set it, or %s, to the loosest threshold a request may ask for: without either, a sender chooses its own SLO", at, name)}
	case limit == nil:
		return nil
	case *limit <= 0 || limit.Seconds() > derive.MaxSeconds:
		return []error{fmt.Errorf("%s.max: %v must be a positive duration of at most a week, such as 2s", at, *limit)}
	case configured != nil && *limit < *configured:
		return []error{fmt.Errorf("%s.max: %v is below %s (%v): a request may always tighten the configured threshold, so max only loosens it", at, *limit, name, *configured)}
	}
	return nil
}

// numericUnit parses a unit of a number: a duration string or a timestamp
// cannot be a threshold.
func numericUnit(name string) (preset.Unit, error) {
	u, err := preset.ParseUnit(name)
	if err != nil || u == preset.Duration || u == preset.Timestamp {
		// preset's own message would list "duration" and "timestamp",
		// which a threshold refuses: list only what is accepted here.
		return 0, fmt.Errorf("unknown unit %q: allowed values are \"s\", \"ms\", \"us\", \"ns\"", name)
	}
	return u, nil
}

// compileFrom gives the compiled SLO its per-request sources, if any; an
// SLO without them keeps From nil and judges as before.
func (s *SLOConfig) compileFrom(o *slo.SLO) *slo.SLO {
	var src slo.Sources
	found := false
	configured := s.configured()
	for i, f := range s.from() {
		if f == nil {
			continue
		}
		u, _ := numericUnit(f.Unit) // validated
		loosest := f.Max            // validated: this or the configured one is set
		if loosest == nil {
			loosest = configured[i]
		}
		src[i] = &slo.FromAttribute{Key: f.Key, Scale: u.Seconds(1), Max: loosest.Seconds()}
		found = true
	}
	if found {
		o.From = &src
	}
	return o
}
