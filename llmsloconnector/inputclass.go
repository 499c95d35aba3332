// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
	"fmt"
	"strconv"

	"github.com/llmslo/llmslo/internal/contract"
)

// maxInputTokenClasses caps input_token_classes: every class is one more
// series per dimension set (len + 2 with gt_ and unknown), so the list
// bounds the multiplication of the connector's cardinality.
const maxInputTokenClasses = 16

// inputClassUnknown is the class of a span without an input token count.
const inputClassUnknown = "unknown"

// inputClasses sorts spans by input token count into the classes of
// input_token_classes. The names are built once per configuration, so a
// span only picks an index: the hot path builds no string.
type inputClasses struct {
	bounds []float64
	// names[i] is le_<bounds[i]> for i < len(bounds), then gt_<last
	// bound>, then unknown.
	names []string
}

// newInputClasses returns the classes of bounds; nil when there are none
// (input_token_classes off).
func newInputClasses(bounds []int64) *inputClasses {
	if len(bounds) == 0 {
		return nil
	}
	ic := &inputClasses{bounds: make([]float64, len(bounds)), names: make([]string, 0, len(bounds)+2)}
	for i, b := range bounds {
		ic.bounds[i] = float64(b)
		ic.names = append(ic.names, "le_"+strconv.FormatInt(b, 10))
	}
	ic.names = append(ic.names, "gt_"+strconv.FormatInt(bounds[len(bounds)-1], 10), inputClassUnknown)
	return ic
}

// of returns the class index of tokens input tokens (has: the count is
// known). Bounds are inclusive upper bounds, as a histogram's le: 1024
// tokens are le_1024, 1025 are le_4096.
func (ic *inputClasses) of(tokens float64, has bool) uint8 {
	if !has {
		return uint8(len(ic.names) - 1)
	}
	for i, b := range ic.bounds { // at most 16: a scan beats a search
		if tokens <= b {
			return uint8(i)
		}
	}
	return uint8(len(ic.bounds))
}

// validateInputTokenClasses refuses a list that is too long, not positive,
// above the token bound or not strictly increasing, naming the
// offending entry. (A fraction such as 1.5 is refused when the
// configuration is decoded: confcheck.Shape.)
func validateInputTokenClasses(bounds []int64) []error {
	var errs []error
	if len(bounds) > maxInputTokenClasses {
		errs = append(errs, fmt.Errorf("input_token_classes: %d boundaries, at most %d: each class multiplies the series", len(bounds), maxInputTokenClasses))
	}
	for i, b := range bounds {
		switch {
		case b <= 0:
			errs = append(errs, fmt.Errorf("input_token_classes[%d]: %d must be a positive number of tokens", i, b))
		case b > contract.MaxTokens:
			errs = append(errs, fmt.Errorf("input_token_classes[%d]: %d must be at most %d (2^24), the largest input token count a request may have (a larger count is rejected): a bound above it splits nothing", i, b, contract.MaxTokens))
		case i > 0 && b <= bounds[i-1]:
			errs = append(errs, fmt.Errorf("input_token_classes[%d]: %d must be greater than %d before it (strictly increasing)", i, b, bounds[i-1]))
		}
	}
	return errs
}
