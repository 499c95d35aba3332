// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

// Package promtime reads and writes durations as Prometheus and Sloth write
// them ("5m", "30d", "4w", "1h30m"), and holds the rules of an SLO's
// compliance period. Go's time.ParseDuration has no days or weeks, which
// every SLO period needs.
package promtime

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"time"
)

// Day and Week, as Prometheus counts them (no calendar: 24 h and 7 days).
const (
	Day  = 24 * time.Hour
	Week = 7 * Day
	year = 365 * Day
)

// units in the order Prometheus writes them, largest first; exact marks
// the units written only when they divide the duration ("90d", not
// "12w6d"), as github.com/prometheus/common/model.Duration does.
var units = []struct {
	name  string
	d     time.Duration
	exact bool
}{
	{"y", year, true}, {"w", Week, true}, {"d", Day, false}, {"h", time.Hour, false},
	{"m", time.Minute, false}, {"s", time.Second, false}, {"ms", time.Millisecond, false},
}

var durationRE = regexp.MustCompile(`^(?:(\d+)y)?(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?(?:(\d+)ms)?$`)

// Parse reads a Prometheus duration: whole numbers of y, w, d, h, m, s, ms,
// largest unit first ("30d", "4w", "1h30m").
func Parse(s string) (time.Duration, error) {
	m := durationRE.FindStringSubmatch(s)
	if s == "" || m == nil {
		return 0, fmt.Errorf("%q is not a duration such as 30d, 4w or 1h30m", s)
	}
	var d time.Duration
	for i, u := range units {
		if m[i+1] == "" {
			continue
		}
		n, err := strconv.ParseInt(m[i+1], 10, 64)
		if err != nil || n > int64(1<<63-1)/int64(u.d) || d > time.Duration(1<<63-1)-time.Duration(n)*u.d {
			return 0, fmt.Errorf("%q is too long", s)
		}
		d += time.Duration(n) * u.d
	}
	return d, nil
}

// Format writes d as Prometheus does (whole milliseconds; "30d", "4w",
// "1h30m", "0s"): the form Sloth gives its windows in rule names.
func Format(d time.Duration) string {
	ms := d / time.Millisecond
	if ms <= 0 {
		return "0s"
	}
	out := ""
	for _, u := range units {
		unit := u.d / time.Millisecond
		if u.exact && ms%unit != 0 {
			continue
		}
		if v := ms / unit; v > 0 {
			out += strconv.FormatInt(int64(v), 10) + u.name
			ms -= v * unit
		}
	}
	return out
}

// DefaultPeriod is an SLO's compliance period when none is set: Sloth's
// default.
const DefaultPeriod = 30 * Day

// MinPeriod is the shortest period: the longest multi-window alert window
// (3d, the slow ticket alert) must fit in it.
const MinPeriod = 3 * Day

// ParsePeriod reads an SLO's period ("" is DefaultPeriod) and checks that
// it is a whole number of minutes no shorter than MinPeriod.
func ParsePeriod(s string) (time.Duration, error) {
	if s == "" {
		return DefaultPeriod, nil
	}
	d, err := Parse(s)
	if err != nil {
		return 0, err
	}
	if d < MinPeriod {
		return 0, fmt.Errorf("%s is shorter than %s, the longest burn-rate alert window", s, Format(MinPeriod))
	}
	if d%time.Minute != 0 {
		return 0, errors.New(s + " must be a whole number of minutes")
	}
	return d, nil
}
