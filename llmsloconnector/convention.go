// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
	"fmt"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/llmslo/llmslo/internal/aggregate"
	"github.com/llmslo/llmslo/internal/contract"
)

// The metric_names option: which convention version names the
// distributions and token metrics (names.go has both sets). With the
// default set nothing here runs per span beyond one branch; the token
// counters of the next set are kept in a per-series block allocated only
// under it.

// validateMetricNames refuses a value that names no set.
func (c *Config) validateMetricNames() []error {
	if _, ok := metricNameSets[c.MetricNames]; ok {
		return nil
	}
	return []error{fmt.Errorf("metric_names: %q: allowed values are %s (default %s)",
		c.MetricNames, strings.Join(metricNamesValues, ", "), metricNamesV141)}
}

// namesFor is the name set of a metric_names value; a configuration built
// without the defaults (empty) gets the default set.
func namesFor(v string) *metricNames {
	if n, ok := metricNameSets[v]; ok {
		return n
	}
	return &namesV141
}

// usageObservation is one span's token counts for the counters; the input
// and output counts are the observation's token values.
type usageObservation struct {
	n   [numUsageKinds]uint64
	has uint8 // bit u: n[u] is set
}

// usageCounts are a series' token counters.
type usageCounts struct {
	n    [numUsageKinds]uint64
	seen uint8 // bit u: counter u has seen a value (cumulative: emitted from then on)
}

// usageValue reads a token-detail count (the processor's cache-read,
// cache-write and reasoning tokens) when the set has counters; a negative,
// fractional, non-finite or too large one is counted and dropped.
func (c *llmSLOConnector) usageValue(o *observation, u usageKind, v pcommon.Value) {
	if !c.names.counters() {
		return
	}
	f, ok := number(v)
	if !ok {
		o.rejected++
		return
	}
	if !(f >= 0 && f <= contract.MaxTokens) || f != float64(uint64(f)) {
		o.rejected++
		return
	}
	o.usage.n[u], o.usage.has = uint64(f), o.usage.has|1<<u
}

// recordUsage adds o's token counts to s. Caller holds the series' lock.
// recordUsage adds the span's token counts, n times (its adjusted count).
func (c *llmSLOConnector) recordUsage(s *series, o *observation, n uint64) {
	u := &o.usage
	if o.has[histInputTokens] {
		u.n[usageInput], u.has = uint64(o.values[histInputTokens]), u.has|1<<usageInput
	}
	if o.has[histOutputTokens] {
		u.n[usageOutput], u.has = uint64(o.values[histOutputTokens]), u.has|1<<usageOutput
	}
	if u.has == 0 {
		return
	}
	if s.usage == nil {
		s.usage = &usageCounts{}
	}
	for k := range numUsageKinds {
		if u.has&(1<<k) != 0 {
			s.usage.n[k] += aggregate.MulSat(u.n[k], n)
		}
	}
	s.usage.seen |= u.has
}

// emitUsage writes s's token counters.
func (c *llmSLOConnector) emitUsage(b *builder, s *series, ts pcommon.Timestamp) {
	if s.usage == nil {
		return
	}
	for k := range numUsageKinds {
		if s.usage.seen&(1<<k) != 0 {
			emitCount(b, s, c.names.usageDef(k, s.layer), &s.usage.n[k], ts)
		}
	}
}
