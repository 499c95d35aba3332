// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package slo

import (
	"math"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/llmslo/llmslo/internal/derive"
)

// FromAttribute is a threshold a request carries in a span attribute,
// such as a gateway's x-slo-ttft-ms header: Key is looked up on the span,
// and its number is multiplied by Scale to give seconds. Max is the loosest
// threshold, in seconds, a request may ask for: the attribute is the
// sender's word, and without a bound a sender would choose its own SLO.
type FromAttribute struct {
	Key   string
	Scale float64
	Max   float64
}

// Sources are an SLO's per-request thresholds, by constraint in the order
// of Names; a nil entry keeps the configured threshold.
type Sources [len(constraints)]*FromAttribute

// LimitsFor sets out to the limits of one request: each constraint with a
// source takes the attribute's value when it holds a valid threshold
// (preferred), else the configured one (the fallback); absent with no
// fallback, the constraint does not apply. A value that is present but not
// a positive number is malformed (derive.InvalidValue), one looser than the
// source's Max out of range (derive.OutOfRange): either way the constraint
// falls back, or is undecidable without a fallback, and the first such
// reason is returned so the caller can report it.
func (s *SLO) LimitsFor(attrs pcommon.Map, out *Limits) derive.Reason {
	*out = s.Limits
	bad := derive.NoReason
	for i, src := range s.From {
		if src == nil {
			continue
		}
		v, ok := attrs.Get(src.Key)
		if !ok {
			continue
		}
		t := out.At(i) // i < len(Sources) = len(constraints)
		r := src.check(v)
		if r == derive.NoReason {
			secs, _ := number(v)
			*t = Threshold{Seconds: secs * src.Scale, Set: true}
			continue
		}
		if bad == derive.NoReason {
			bad = r
		}
		if !t.Set {
			*t = Threshold{Set: true, Invalid: true}
		}
	}
	return bad
}

// check says whether v is a threshold a request may ask for.
func (src *FromAttribute) check(v pcommon.Value) derive.Reason {
	secs, ok := number(v)
	secs *= src.Scale
	switch {
	case !ok || !(secs > 0):
		return derive.InvalidValue
	case secs > src.Max || secs > derive.MaxSeconds:
		return derive.OutOfRange
	}
	return derive.NoReason
}

// number reads an int, a double, a decimal string, or the first element of
// a string array (the HTTP conventions record each request header as one:
// http.request.header.<name>).
func number(v pcommon.Value) (float64, bool) {
	switch v.Type() {
	case pcommon.ValueTypeInt:
		return float64(v.Int()), true
	case pcommon.ValueTypeDouble:
		return v.Double(), !math.IsNaN(v.Double())
	case pcommon.ValueTypeStr:
		f, err := strconv.ParseFloat(strings.TrimSpace(v.Str()), 64)
		return f, err == nil && !math.IsNaN(f)
	case pcommon.ValueTypeSlice:
		if v.Slice().Len() == 1 && v.Slice().At(0).Type() == pcommon.ValueTypeStr {
			return number(v.Slice().At(0))
		}
	}
	return 0, false
}
