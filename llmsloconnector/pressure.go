// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/llmslo/llmslo/internal/catalog"
	"github.com/llmslo/llmslo/internal/confcheck"
	"github.com/llmslo/llmslo/internal/contract"
	"github.com/llmslo/llmslo/internal/registry"
	"github.com/llmslo/llmslo/llmsloconnector/internal/series"
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
	// SLOs are the processor's SLOs whose pressure is written, by name
	// (`slos: [interactive]`): the thresholds are the processor's, read
	// from the registry at Start. Thresholds written here ({name, ttft,
	// ...}) are for a connector in a collector without the processor; with
	// it, they must equal the processor's.
	SLOs []PressureSLO `mapstructure:"slos"`

	_ struct{}
}

// PressureSLO is one SLO, by name, and optionally its thresholds: only the
// constraints the connector has a window of (ttft, tpot, e2e) can be given.
// ITL and QueueTime are read only to be refused with the reason, rather
// than as unknown keys.
type PressureSLO struct {
	Name      string        `mapstructure:"name"`
	TTFT      time.Duration `mapstructure:"ttft"`
	TPOT      time.Duration `mapstructure:"tpot"`
	E2E       time.Duration `mapstructure:"e2e"`
	ITL       time.Duration `mapstructure:"itl"`
	QueueTime time.Duration `mapstructure:"queue_time"`

	_ struct{}
}

// UnmarshalText reads the short form, the SLO's name alone (`slos:
// [interactive]`): its thresholds are the processor's.
func (p *PressureSLO) UnmarshalText(text []byte) error {
	*p = PressureSLO{Name: string(text)}
	return nil
}

// The bounds of a threshold written under pressure: below 100µs no engine
// reports a time per output token, and above a week (the processor's own
// bound) no latency reaches the window.
const (
	minPressureThreshold = 100 * time.Microsecond
	maxPressureThreshold = time.Duration(contract.MaxSeconds) * time.Second
)

const (
	defaultPressureQuantile    = 0.9
	defaultPressureMinRequests = 20
	// maxPressureMinRequests bounds min_requests where any real window's
	// count fits: a larger value would only turn the gauge off.
	maxPressureMinRequests = 1_000_000
)

// minRobustRequests is the fewest unweighted requests at which no one of
// them can be the q-quantile (12 at 0.9, 22 at 0.95, 102 at 0.99).
func minRobustRequests(q float64) int {
	for n := uint64(3); n <= maxPressureMinRequests; n++ {
		if series.OneSpanCannotSet(n, 1, q) {
			return int(n)
		}
	}
	return maxPressureMinRequests
}

// metricSLOPressure is the pressure gauge, with llm.slo.name and
// llm.slo.constraint.
var metricSLOPressure = metricDef{catalog.SLOPressure.Name, catalog.SLOPressure.Unit,
	"Window quantile (pressure.quantile) of a constraint's latency divided by the SLO's threshold for it, per SLO and constraint (per collector replica): above 1, the quantile misses the threshold."}

// windowConstraint is the contract constraint each window measures
// (series.WindowConstraint); empty: none.
var windowConstraint = series.WindowConstraint

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

// validate checks the pressure block. The quantile and the
// minimum are checked even when no SLO is listed: a value out of range is
// a mistake whether or not the gauge is on yet.
func (p *PressureConfig) validate() []error {
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
		for w, d := range s.thresholds() {
			if d != 0 && (d < minPressureThreshold || d > maxPressureThreshold) {
				errs = append(errs, fmt.Errorf("%s.%s: %v must be between %v and %v (a week, the processor's bound), such as 500ms",
					field, windowConstraint[w], d, minPressureThreshold, maxPressureThreshold))
			}
		}
		if s.ITL != 0 {
			errs = append(errs, fmt.Errorf("%s.%s: not supported: the itl window holds every gap, the processor's itl constraint bounds each request's largest", field, contract.ConstraintITL))
		}
		if s.QueueTime != 0 {
			errs = append(errs, fmt.Errorf("%s.%s: not supported: the connector keeps no window of queue time (name the SLO alone, or give %s)", field, contract.ConstraintQueueTime, strings.Join(pressureConstraints(), ", ")))
		}
	}
	return errs
}

// pressureSpec is one SLO's thresholds in seconds, by windowKind (0: none).
type pressureSpec = series.Thresholds

// pressureSpecs are the thresholds written in the configuration, by SLO
// name; nil when off. They serve until Start resolves the SLOs against the
// processors (resolvePressure).
func pressureSpecs(p *PressureConfig) map[string]*pressureSpec {
	if len(p.SLOs) == 0 {
		return nil
	}
	m := make(map[string]*pressureSpec, len(p.SLOs))
	for _, s := range p.SLOs {
		m[s.Name] = specOf(s.thresholds())
	}
	return m
}

func specOf(th [numWindowKinds]time.Duration) *pressureSpec {
	var spec pressureSpec
	for w, d := range th {
		spec[w] = d.Seconds()
	}
	return &spec
}

// judgedSLO is an SLO a processor of this collector judges, with that
// processor's configured thresholds by constraint name.
type judgedSLO struct {
	processor  string
	thresholds map[string]time.Duration
}

// resolvePressure gives each pressure SLO its thresholds at Start. With the
// llm_slo processors of this collector (src follows them), they are the
// processor's own, and thresholds written in the configuration must equal
// them; without, they are the ones written. An SLO no processor judges, a
// contradiction, or an SLO with nothing to compare is an error naming the
// entry: the autoscaler would otherwise see no data and no one would know.
func resolvePressure(p *PressureConfig, src *source, procs []registry.Processor) (map[string]*pressureSpec, error) {
	if len(p.SLOs) == 0 {
		return nil, nil
	}
	judged := judgedSLOs(src, procs)
	m := make(map[string]*pressureSpec, len(p.SLOs))
	var errs []error
	for i := range p.SLOs {
		th, err := pressureThresholds(fmt.Sprintf("pressure.slos[%d]", i), &p.SLOs[i], src, judged)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		m[p.SLOs[i].Name] = specOf(th)
	}
	return m, errors.Join(errs...)
}

// judgedSLOs are the SLOs of the processors src reads, by name (one
// definition per name: the registry refuses two).
func judgedSLOs(src *source, procs []registry.Processor) map[string]judgedSLO {
	out := map[string]judgedSLO{}
	for _, p := range procs {
		if p.Prefix != src.keys.Prefix {
			continue
		}
		for i, name := range p.SLOs {
			if _, ok := out[name]; ok {
				continue
			}
			j := judgedSLO{processor: p.ID}
			if i < len(p.Thresholds) {
				j.thresholds = p.Thresholds[i]
			}
			out[name] = j
		}
	}
	return out
}

// pressureThresholds are one pressure SLO's thresholds by window (see
// resolvePressure): the processor's for every constraint the connector has
// a window of, or, when some are written, for those only.
func pressureThresholds(field string, s *PressureSLO, src *source, judged map[string]judgedSLO) ([numWindowKinds]time.Duration, error) {
	given := s.thresholds()
	written := given != [numWindowKinds]time.Duration{}
	if len(src.processors) == 0 {
		if !written {
			return given, fmt.Errorf("%s: %q: no llm_slo processor runs in this collector to take its thresholds from: write them, such as {name: %s, ttft: 500ms, e2e: 10s}", field, s.Name, s.Name)
		}
		return given, nil
	}
	j, ok := judged[s.Name]
	if !ok {
		return given, unjudged(field, s.Name, src)
	}
	var th [numWindowKinds]time.Duration
	var errs []error
	for w, c := range windowConstraint {
		own := j.thresholds[c]
		switch {
		case c == "":
		case given[w] != 0 && own == 0:
			errs = append(errs, fmt.Errorf("%s.%s: %v, but %s bounds no %s in SLO %q: remove it (the connector takes the processor's thresholds)", field, c, given[w], j.processor, c, s.Name))
		case given[w] != 0 && given[w] != own:
			errs = append(errs, fmt.Errorf("%s.%s: %v contradicts %s, which judges SLO %q with %s %v: remove it (the connector takes the processor's thresholds) or make it equal", field, c, given[w], j.processor, s.Name, c, own))
		case given[w] != 0 || !written:
			th[w] = own
		}
	}
	if len(errs) > 0 {
		return th, errors.Join(errs...)
	}
	if th == [numWindowKinds]time.Duration{} {
		return th, fmt.Errorf("%s: %q: %s bounds none of %s with a configured threshold, so it has no pressure to write", field, s.Name, j.processor, strings.Join(pressureConstraints(), ", "))
	}
	return th, nil
}

// unjudged says that no processor of this collector judges name, naming
// the SLOs they do judge and the nearest.
func unjudged(field, name string, src *source) error {
	var names []string
	for i := 0; ; i++ {
		n, ok := src.names.name(i)
		if !ok {
			break
		}
		names = append(names, n)
	}
	hint := ""
	if near, ok := confcheck.Closest(name, names); ok {
		hint = fmt.Sprintf(": did you mean %s?", near)
	}
	return fmt.Errorf("%s: %q is judged by no llm_slo processor of this collector (%s judge %s), so its pressure would never be written%s",
		field, name, strings.Join(src.processors, ", "), strings.Join(names, ", "), hint)
}
