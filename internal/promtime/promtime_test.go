// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package promtime

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseFormat(t *testing.T) {
	for _, c := range []struct {
		in   string
		d    time.Duration
		text string
	}{
		{"5m", 5 * time.Minute, "5m"},
		{"30d", 30 * Day, "30d"},
		{"28d", 28 * Day, "4w"},
		{"4w", 28 * Day, "4w"},
		{"90d", 90 * Day, "90d"},
		{"1h30m", 90 * time.Minute, "1h30m"},
		{"1d", Day, "1d"},
		{"72m", 72 * time.Minute, "1h12m"},
		{"1y", 365 * Day, "1y"},
		{"500ms", 500 * time.Millisecond, "500ms"},
	} {
		d, err := Parse(c.in)
		require.NoError(t, err, c.in)
		assert.Equal(t, c.d, d, c.in)
		assert.Equal(t, c.text, Format(d), c.in)
	}
	for _, bad := range []string{"", "30", "d", "1.5d", "-1d", "1m1h", "30 d", "99999999999999999999d"} {
		_, err := Parse(bad)
		assert.Error(t, err, bad)
	}
	assert.Equal(t, "0s", Format(0))
}

func TestParsePeriod(t *testing.T) {
	d, err := ParsePeriod("")
	require.NoError(t, err)
	assert.Equal(t, 30*Day, d)
	d, err = ParsePeriod("4w")
	require.NoError(t, err)
	assert.Equal(t, 28*Day, d)
	_, err = ParsePeriod("1d")
	assert.ErrorContains(t, err, "shorter than 3d")
	_, err = ParsePeriod("7d30s")
	assert.ErrorContains(t, err, "whole number of minutes")
	_, err = ParsePeriod("month")
	assert.Error(t, err)
}
