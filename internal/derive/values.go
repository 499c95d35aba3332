// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package derive

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/llmslo/llmslo/internal/preset"
)

// parseSeconds reads a duration attribute in unit u as seconds. spanStart
// (Unix ns) anchors the Timestamp unit.
func parseSeconds(v pcommon.Value, u preset.Unit, spanStart uint64) (float64, Reason) {
	var x float64
	switch v.Type() {
	case pcommon.ValueTypeDouble:
		x = v.Double()
	case pcommon.ValueTypeInt:
		x = float64(v.Int())
	case pcommon.ValueTypeStr:
		s := v.Str()
		switch u {
		case preset.Duration:
			d, ok := ParseDuration(s)
			if !ok {
				return 0, InvalidValue
			}
			x, u = d, preset.Seconds
		case preset.Timestamp:
			t, ok := parseTimestamp(s)
			if !ok {
				return 0, InvalidValue
			}
			return sinceStart(t, spanStart)
		default:
			f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil {
				return 0, InvalidValue
			}
			x = f
		}
	default:
		return 0, InvalidType
	}
	if u == preset.Timestamp {
		// A numeric timestamp is Unix nanoseconds. 2^63 is excluded: it
		// does not convert to int64 (it would wrap to a negative time).
		if math.IsNaN(x) || x < 0 || x >= 1<<63 {
			return 0, InvalidValue
		}
		return sinceStart(int64(x), spanStart)
	}
	x = u.Seconds(x)
	if r := CheckSeconds(x); r != NoReason {
		return 0, r
	}
	return x, NoReason
}

// sinceStart is the time from spanStart to unixNano in seconds. It compares
// in uint64, so a span start at or beyond 2^63 ns cannot overflow.
func sinceStart(unixNano int64, spanStart uint64) (float64, Reason) {
	if unixNano < 0 || uint64(unixNano) < spanStart {
		return 0, InvalidValue
	}
	x := nanos(uint64(unixNano) - spanStart)
	if r := CheckSeconds(x); r != NoReason {
		return 0, r
	}
	return x, NoReason
}

func parseTimestamp(s string) (int64, bool) {
	s = strings.Trim(strings.TrimSpace(s), `"`)
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, false
	}
	return t.UnixNano(), true
}

// parseCount reads a token count.
func parseCount(v pcommon.Value) (int64, Reason) {
	var n int64
	switch v.Type() {
	case pcommon.ValueTypeInt:
		n = v.Int()
	case pcommon.ValueTypeDouble:
		f := v.Double()
		if math.IsNaN(f) || math.IsInf(f, 0) || f != math.Trunc(f) {
			return 0, InvalidValue
		}
		if f > MaxTokens || f < 0 {
			if f < 0 {
				return 0, InvalidValue
			}
			return 0, OutOfRange
		}
		n = int64(f)
	case pcommon.ValueTypeStr:
		i, err := strconv.ParseInt(strings.TrimSpace(v.Str()), 10, 64)
		if err != nil {
			return 0, InvalidValue
		}
		n = i
	default:
		return 0, InvalidType
	}
	if r := CheckTokens(n); r != NoReason {
		return 0, r
	}
	return n, NoReason
}

// jsonField reads field from a string attribute holding a JSON object. It
// returns false when the attribute is not such a string or lacks the field;
// a field of the wrong kind comes back as a string, for parseCount to
// reject.
func jsonField(v pcommon.Value, field string) (pcommon.Value, bool) {
	if v.Type() != pcommon.ValueTypeStr {
		return pcommon.Value{}, false
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(v.Str()), &obj) != nil {
		return pcommon.Value{}, false
	}
	raw, ok := obj[field]
	if !ok {
		return pcommon.Value{}, false
	}
	var num json.Number
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	if dec.Decode(&num) == nil {
		return pcommon.NewValueStr(num.String()), true
	}
	return pcommon.NewValueStr(string(raw)), true
}

// parseBool reads a stream flag: a bool, or a string such as "True" (LiteLLM).
func parseBool(v pcommon.Value) (Tri, Reason) {
	switch v.Type() {
	case pcommon.ValueTypeBool:
		if v.Bool() {
			return True, NoReason
		}
		return False, NoReason
	case pcommon.ValueTypeStr:
		switch s := strings.TrimSpace(v.Str()); {
		case strings.EqualFold(s, "true"):
			return True, NoReason
		case strings.EqualFold(s, "false"):
			return False, NoReason
		}
		return Unknown, InvalidValue
	default:
		return Unknown, InvalidType
	}
}

// ParseDuration parses a duration string as Go's time.Duration and Rust's
// Debug format of std::time::Duration print it ("1.234567ms", "2.5s",
// "850µs", "850us", "12ns", "1m2.5s", "1h0m0s") into seconds. It reports
// false for anything else, including negative values.
func ParseDuration(s string) (float64, bool) {
	s = strings.Trim(strings.TrimSpace(s), `"`)
	if s == "" || s[0] == '-' {
		return 0, false
	}
	var total float64
	for s != "" {
		i := 0
		for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
			i++
		}
		if i == 0 {
			return 0, false
		}
		num, err := strconv.ParseFloat(s[:i], 64)
		if err != nil {
			return 0, false
		}
		s = s[i:]
		j := 0
		for j < len(s) && (s[j] < '0' || s[j] > '9') && s[j] != '.' {
			j++
		}
		var scale float64
		switch s[:j] {
		case "ns":
			scale = 1e-9
		case "us", "µs", "μs":
			scale = 1e-6
		case "ms":
			scale = 1e-3
		case "s":
			scale = 1
		case "m":
			scale = 60
		case "h":
			scale = 3600
		default:
			return 0, false
		}
		total += num * scale
		s = s[j:]
	}
	if math.IsInf(total, 0) {
		return 0, false
	}
	return total, true
}
