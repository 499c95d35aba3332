// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package derive

import (
	"math"

	"github.com/llmslo/llmslo/internal/contract"
)

// The project's one set of bounds, internal/contract's: the derivation
// applies them to every value it reads or computes (CheckSeconds,
// CheckTokens), and the connector the same bounds to what it reads from a
// span.
const (
	MaxSeconds = contract.MaxSeconds
	MaxTokens  = contract.MaxTokens
)

// CheckSeconds returns NoReason when x is a duration in seconds the project
// accepts; InvalidValue when it is negative, NaN or infinite; OutOfRange when
// it is finite but beyond MaxSeconds.
func CheckSeconds(x float64) Reason {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0) || x < 0:
		return InvalidValue
	case x > MaxSeconds:
		return OutOfRange
	}
	return NoReason
}

// CheckTokens returns NoReason when n is a token count the project accepts;
// InvalidValue when negative; OutOfRange beyond MaxTokens.
func CheckTokens(n int64) Reason {
	switch {
	case n < 0:
		return InvalidValue
	case n > MaxTokens:
		return OutOfRange
	}
	return NoReason
}

// checkNanos is CheckSeconds for a duration between two Unix-ns timestamps
// with from <= to.
func checkNanos(from, to uint64) Reason {
	if to-from > MaxSeconds*1e9 {
		return OutOfRange
	}
	return NoReason
}
