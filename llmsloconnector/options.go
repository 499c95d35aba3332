// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
	"time"
)

// option is a test seam: the clock, the flush ticker, the instance id.
type option func(*llmSLOConnector)

// withClock replaces time.Now.
func withClock(now func() time.Time) option {
	return func(c *llmSLOConnector) { c.now = now }
}

// withTicker makes the flush loop read ticks from ch instead of a
// time.Ticker of metrics_flush_interval.
func withTicker(ch <-chan time.Time) option {
	return func(c *llmSLOConnector) {
		c.ticker = func(time.Duration) (<-chan time.Time, func()) { return ch, func() {} }
	}
}

// withInstanceID fixes collector.instance.id (when it is on), so golden
// files are stable.
func withInstanceID(id string) option {
	return func(c *llmSLOConnector) { c.instance = id }
}

func realTicker(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}
