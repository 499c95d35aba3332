// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
	"fmt"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/llmslo/llmslo/internal/contract"
)

// The metric_names option: which convention version names the
// distributions and token metrics (names.go has both sets). With the
// default set nothing here runs per span beyond one branch; the token
// counters of the next set are kept in a per-series block allocated only
// under it.

// validateMetricNames refuses a metric_names value that names no set.
func validateMetricNames(v string) []error {
	if _, ok := metricNameSets[v]; ok {
		return nil
	}
	return []error{fmt.Errorf("metric_names: %q: allowed values are %s (default %s)",
		v, strings.Join(metricNamesValues, ", "), metricNamesV141)}
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

// usageValue reads a token-detail count (the processor's cache-read,
// cache-write and reasoning tokens) when the set has counters; a negative,
// fractional, non-finite or too large one is counted and dropped.
func (c *spanReader) usageValue(o *observation, u usageKind, v pcommon.Value) {
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
