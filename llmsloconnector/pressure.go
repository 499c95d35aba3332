// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
	"fmt"
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

const defaultPressureQuantile = 0.9

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

// validatePressure checks the pressure block; an empty slos list turns it
// off, whatever the quantile.
func (c *Config) validatePressure() []error {
	p := &c.Pressure
	if len(p.SLOs) == 0 {
		return nil
	}
	var errs []error
	if !(p.Quantile > 0 && p.Quantile < 1) {
		errs = append(errs, fmt.Errorf("pressure.quantile: %v must be between 0 and 1 (exclusive; default %v)", p.Quantile, defaultPressureQuantile))
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
// sample), the pressure of every SLO that judged a span of s and bounds the
// window's constraint. Flush only: the per-span path is unchanged.
func (c *llmSLOConnector) emitPressure(b *builder, s *series, ts pcommon.Timestamp, w windowKind, sk *aggregate.Sketch) {
	if c.pressure == nil || windowConstraint[w] == "" {
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
