// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
	"fmt"
	"math"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/llmslo/llmslo/internal/aggregate"
	"github.com/llmslo/llmslo/internal/catalog"
	"github.com/llmslo/llmslo/internal/contract"
)

// PressureConfig configures the llm.slo.pressure gauge: per SLO and
// constraint, the window's quantile of the constraint's latency divided by
// the constraint's threshold, so "scale out above 0.8" is one rule. Off
// unless SLOs are listed.
type PressureConfig struct {
	// Quantile is the window's quantile compared with the thresholds, in
	// (0, 1). Default 0.9.
	Quantile float64 `mapstructure:"quantile"`
	// MinRequests is the fewest requests (adjusted counts included) a
	// series' window must hold before its pressure is written; at least
	// minRobustRequests(Quantile), below which one request can be the
	// quantile. Default 20.
	MinRequests int `mapstructure:"min_requests"`
	// SLOs are the processor's SLOs (by name) and their thresholds.
	SLOs []PressureSLO `mapstructure:"slos"`

	_ struct{}
}

// PressureSLO is one SLO's thresholds: only the constraints the connector
// has a window of (ttft, tpot, e2e) can be given. ITL and QueueTime are
// read only to be refused with the reason, rather than as unknown keys.
type PressureSLO struct {
	Name      string        `mapstructure:"name"`
	TTFT      time.Duration `mapstructure:"ttft"`
	TPOT      time.Duration `mapstructure:"tpot"`
	E2E       time.Duration `mapstructure:"e2e"`
	ITL       time.Duration `mapstructure:"itl"`
	QueueTime time.Duration `mapstructure:"queue_time"`

	_ struct{}
}

const (
	defaultPressureQuantile    = 0.9
	defaultPressureMinRequests = 20
	// maxPressureMinRequests bounds min_requests where any real window's
	// count fits: a larger value would only turn the gauge off.
	maxPressureMinRequests = 1_000_000
)

// oneSpanCannotSet reports whether, in a window of n values whose heaviest
// span added w of them, that span stays out of the q-quantile: the
// quantile interpolates the order statistics at ranks floor((n-1)q) and
// the next (aggregate.Sketch.Quantile), and a span of weight w that is the
// window's largest holds the top w ranks, so it is left out when
// floor((n-1)q) + 1 < n - w. Then one span, whatever its latency, moves the
// quantile by at most w ranks of the other requests' latencies, never
// above the largest of them.
func oneSpanCannotSet(n, w uint64, q float64) bool {
	if n <= w+1 {
		return false
	}
	return uint64(math.Floor(float64(n-1)*q))+w+2 <= n
}

// minRobustRequests is the fewest unweighted requests at which no one of
// them can be the q-quantile (12 at 0.9, 22 at 0.95, 102 at 0.99).
func minRobustRequests(q float64) int {
	for n := uint64(3); n <= maxPressureMinRequests; n++ {
		if oneSpanCannotSet(n, 1, q) {
			return int(n)
		}
	}
	return maxPressureMinRequests
}

// metricSLOPressure is the pressure gauge, with llm.slo.name and
// llm.slo.constraint.
var metricSLOPressure = metricDef{catalog.SLOPressure.Name, catalog.SLOPressure.Unit,
	"Window quantile (pressure.quantile) of a constraint's latency divided by the SLO's threshold for it, per SLO and constraint (per collector replica): above 1, the quantile misses the threshold."}

// windowConstraint is the contract constraint each window measures, by
// windowKind; empty: no SLO constraint bounds that distribution. The itl
// window holds every gap, while the processor's itl constraint bounds each
// request's largest gap, so its quantile is not the constrained value.
var windowConstraint = [numWindowKinds]string{
	windowTTFT: contract.ConstraintTTFT,
	windowTPOT: contract.ConstraintTPOT,
	windowE2E:  contract.ConstraintE2E,
}

// thresholds are a PressureSLO's thresholds, by windowKind.
func (p *PressureSLO) thresholds() [numWindowKinds]time.Duration {
	return [numWindowKinds]time.Duration{windowTTFT: p.TTFT, windowTPOT: p.TPOT, windowE2E: p.E2E}
}

// pressureConstraints are the constraints a pressure SLO may bound.
func pressureConstraints() []string {
	var names []string
	for _, c := range windowConstraint {
		if c != "" {
			names = append(names, c)
		}
	}
	return names
}

// validatePressure checks the pressure block. The quantile and the
// minimum are checked even when no SLO is listed: a value out of range is
// a mistake whether or not the gauge is on yet.
func (c *Config) validatePressure() []error {
	p := &c.Pressure
	var errs []error
	switch {
	case !(p.Quantile > 0 && p.Quantile < 1):
		errs = append(errs, fmt.Errorf("pressure.quantile: %v must be between 0 and 1 (exclusive; default %v)", p.Quantile, defaultPressureQuantile))
	case p.MinRequests > maxPressureMinRequests:
		errs = append(errs, fmt.Errorf("pressure.min_requests: %d must be at most %d (default %d)", p.MinRequests, maxPressureMinRequests, defaultPressureMinRequests))
	case p.MinRequests < minRobustRequests(p.Quantile):
		errs = append(errs, fmt.Errorf("pressure.min_requests: %d is too few for pressure.quantile %v: below %d requests one request can be the window's quantile by itself; set it to at least %d (default %d)",
			p.MinRequests, p.Quantile, minRobustRequests(p.Quantile), minRobustRequests(p.Quantile), defaultPressureMinRequests))
	}
	seen := map[string]bool{}
	for i, s := range p.SLOs {
		field := fmt.Sprintf("pressure.slos[%d]", i)
		switch {
		case !sloNameRule.MatchString(s.Name):
			errs = append(errs, fmt.Errorf("%s.name: %q must match %s, the processor's SLO names", field, s.Name, sloNameRule))
		case seen[s.Name]:
			errs = append(errs, fmt.Errorf("%s.name: %q is listed twice", field, s.Name))
		}
		seen[s.Name] = true
		set := 0
		for w, d := range s.thresholds() {
			switch {
			case d < 0:
				errs = append(errs, fmt.Errorf("%s.%s: %v must be a positive duration, such as 500ms", field, windowConstraint[w], d))
			case d > 0:
				set++
			}
		}
		if s.ITL != 0 {
			errs = append(errs, fmt.Errorf("%s.%s: not supported: the itl window holds every gap, the processor's itl constraint bounds each request's largest", field, contract.ConstraintITL))
		}
		if s.QueueTime != 0 {
			errs = append(errs, fmt.Errorf("%s.%s: not supported: the connector keeps no window of queue time", field, contract.ConstraintQueueTime))
		}
		if set == 0 {
			errs = append(errs, fmt.Errorf("%s: give at least one threshold of %s", field, strings.Join(pressureConstraints(), ", ")))
		}
	}
	return errs
}

// pressureSpec is one SLO's thresholds in seconds, by windowKind (0: none).
type pressureSpec [numWindowKinds]float64

// pressureSpecs resolves the pressure SLOs by name; nil when off.
func pressureSpecs(p *PressureConfig) map[string]*pressureSpec {
	if len(p.SLOs) == 0 {
		return nil
	}
	m := make(map[string]*pressureSpec, len(p.SLOs))
	for _, s := range p.SLOs {
		var spec pressureSpec
		for w, d := range s.thresholds() {
			spec[w] = d.Seconds()
		}
		m[s.Name] = &spec
	}
	return m
}

// emitPressure writes, for window w of s (merged into sk, with at least one
// sample; heaviest is the most one span added to it), the pressure of every
// SLO that judged a span of s and bounds the window's constraint, when the
// window holds min_requests requests and no one span can be its quantile
// (oneSpanCannotSet). Flush only: the per-span path is unchanged.
func (c *llmSLOConnector) emitPressure(b *builder, s *series, ts pcommon.Timestamp, w windowKind, sk *aggregate.Sketch, heaviest uint64) {
	if c.pressure == nil || windowConstraint[w] == "" {
		return
	}
	n := sk.Count()
	if n < uint64(c.cfg.Pressure.MinRequests) || !oneSpanCannotSet(n, heaviest, c.cfg.Pressure.Quantile) {
		return
	}
	var q float64
	computed := false
	for i, sc := range s.slos {
		name, ok := c.src.names.name(i)
		if sc == nil || !ok {
			continue
		}
		spec := c.pressure[name]
		if spec == nil || spec[w] == 0 {
			continue
		}
		if !computed {
			q, computed = sk.Quantile(c.cfg.Pressure.Quantile), true
		}
		dp := stamp(s, b.gauge(s, metricSLOPressure).AppendEmpty(), ts)
		dp.Attributes().PutStr(attrSLOName, name)
		dp.Attributes().PutStr(attrSLOConstraint, windowConstraint[w])
		dp.SetDoubleValue(q / spec[w])
	}
}
