// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/component"

	"github.com/llmslo/llmslo/internal/adjusted"
	"github.com/llmslo/llmslo/internal/aggregate"
	"github.com/llmslo/llmslo/internal/contract"
	"github.com/llmslo/llmslo/llmsloconnector/internal/series"
)

// Config configures the llm_slo connector.
type Config struct {
	// AttributePrefix is where the processor's attributes are read. Empty
	// (the default): the prefix of the llm_slo processors of this collector
	// (see the README: Reading the processor); "llm." when there is none. Set,
	// it must equal a registered processor's prefix, or Start fails.
	AttributePrefix string `mapstructure:"attribute_prefix"`

	// Dimensions are extra span attributes (then resource attributes) that
	// split every metric, beyond the defaults (model, provider, operation,
	// layer). Never use request ids, prompts or raw routes: each value is a
	// series.
	Dimensions []Dimension `mapstructure:"dimensions"`

	// ResourceDimensions are resource attributes that split every metric and
	// are written on the output resource. Default [service.name].
	ResourceDimensions []string `mapstructure:"resource_dimensions"`

	// Histogram selects the histogram shape.
	Histogram HistogramConfig `mapstructure:"histogram"`

	// Percentiles are emitted, per series, as gauges over Window. Default
	// [50, 90, 99].
	Percentiles []float64 `mapstructure:"percentiles"`

	// Window is the sliding window of the percentile and goodput gauges.
	Window time.Duration `mapstructure:"window"`

	// AggregationCardinalityLimit caps the distinct dimension sets per
	// layer, the overflow series included; beyond it, spans are counted in
	// one series marked otel.metric.overflow=true. 0 disables the cap.
	AggregationCardinalityLimit int `mapstructure:"aggregation_cardinality_limit"`

	// SeriesExpiration drops a series that saw no span for this long.
	SeriesExpiration time.Duration `mapstructure:"series_expiration"`

	// AggregationTemporality is "cumulative" (default) or "delta".
	AggregationTemporality string `mapstructure:"aggregation_temporality"`

	// MetricsFlushInterval is how often metrics are emitted.
	MetricsFlushInterval time.Duration `mapstructure:"metrics_flush_interval"`

	// CollectorInstanceID adds collector.instance.id, unique per connector
	// instance, to every data point, so replicas never write one series.
	CollectorInstanceID bool `mapstructure:"collector_instance_id"`

	// AttributeValueLengthLimit truncates every data point and resource
	// attribute value longer than this many bytes (at a character
	// boundary). 0: no limit.
	AttributeValueLengthLimit int `mapstructure:"attribute_value_length_limit"`

	// MetricNames chooses the GenAI conventions' version of the metric
	// names: "v1.41" (default, the last released) or "next" (the
	// conventions' unreleased renames: gen_ai.client.inference.*, token
	// usage as counters). See the README: Metric names by convention version.
	MetricNames string `mapstructure:"metric_names"`

	// SamplingAdjustedCounts weights each span by the number of requests
	// it stands for, 1/p of the sampling probability an OTEP 235 sampler
	// recorded in its tracestate (ot=th), so request counts, verdict
	// counters, token goodput and histogram counts stay unbiased when the
	// traces are sampled. On by default: a span without a threshold counts
	// one, so unsampled traffic is counted as before, and sampled traffic
	// counted as one per span would be 1/p times too small. Turn it off
	// when a sampler writes thresholds the metrics should ignore.
	SamplingAdjustedCounts bool `mapstructure:"sampling_adjusted_counts"`

	// MaxAdjustedCount is the most requests one sampled span may stand for.
	// The threshold in a tracestate is set by whoever sent the span, so a
	// sender that forges ot=th:fffff would otherwise count as a million
	// requests and choose a series' goodput and percentiles alone. A span
	// whose adjusted count exceeds it counts one and is reported malformed.
	// The default, 100, admits sampling at 1% and above.
	MaxAdjustedCount float64 `mapstructure:"max_adjusted_count"`

	// InputTokenClasses are inclusive upper bounds of input tokens
	// (strictly increasing, at most 16), such as [1024, 4096, 16384]: every
	// series is split by llm.input_class, le_1024, le_4096, le_16384,
	// gt_16384 or unknown (no input token count), so the latency of long
	// prompts is not averaged with short ones. Empty (the default): off.
	// Each class is a dimension set of its own: up to len + 2 times the
	// series, within aggregation_cardinality_limit.
	InputTokenClasses []int64 `mapstructure:"input_token_classes"`

	// Exemplars attach, to each latency histogram point and the
	// violated-requests counter, the slowest requests of the flush interval.
	Exemplars ExemplarsConfig `mapstructure:"exemplars"`

	// Pressure emits llm.slo.pressure, the window's quantile of a
	// constraint's latency over the SLO's threshold, for the SLOs listed
	// (none by default: off).
	Pressure PressureConfig `mapstructure:"pressure"`

	_ struct{}
}

// ExemplarsConfig is spanmetricsconnector's shape.
type ExemplarsConfig struct {
	// Enabled turns exemplars on (default off: they add a trace and span
	// id per kept request to every point).
	Enabled bool `mapstructure:"enabled"`
	// MaxPerDataPoint is how many of the slowest requests each data point
	// keeps per flush interval (default 5, at most maxExemplars).
	MaxPerDataPoint int `mapstructure:"max_per_data_point"`

	_ struct{}
}

const (
	defaultExemplars = 5
	// maxExemplars bounds the memory of a series' exemplars: each kept one
	// is 40 bytes, per histogram and SLO.
	maxExemplars = 100
)

// Dimension is a span (then resource) attribute; Default, if set, is used
// when neither has it (else the dimension is left out of the series).
type Dimension struct {
	Name    string  `mapstructure:"name"`
	Default *string `mapstructure:"default"`

	_ struct{}
}

// HistogramConfig: exponential (default) or explicit, not both.
type HistogramConfig struct {
	Exponential *ExponentialConfig `mapstructure:"exponential"`
	Explicit    *ExplicitConfig    `mapstructure:"explicit"`

	_ struct{}
}

// ExponentialConfig sizes the exponential histograms.
type ExponentialConfig struct {
	// MaxSize is the most buckets one histogram holds (0: the default,
	// 160). The histogram starts at scale 8, the finest that Prometheus
	// native histograms keep, and halves its resolution whenever the values
	// seen would need more buckets; a quantile read from it is within one
	// bucket width, 2^(2^-scale) - 1. Over four decades of values (1 ms to
	// 10 s, say): 160 buckets hold scale 3 (9.1%); 1024 hold scale 6 (1.09%,
	// under 1% in practice: TestAccuracy); 2048 hold scale 7 (0.54%, under 1%
	// whatever the distribution).
	MaxSize int32 `mapstructure:"max_size"`

	_ struct{}
}

// defaultMaxSize is go-expohisto's and spanmetrics' default.
const defaultMaxSize = 160

// ExplicitConfig overrides bucket bounds per metric kind: ttft, tpot, itl,
// duration (also E2E and queue time) and tokens. Unset kinds keep the
// defaults (the conventions' boundaries, extended to minutes-long requests).
type ExplicitConfig struct {
	Buckets map[string][]float64 `mapstructure:"buckets"`

	_ struct{}
}

const (
	temporalityCumulative = "cumulative"
	temporalityDelta      = "delta"
)

var _ component.Config = (*Config)(nil)

// Validate reports every configuration error, each naming its field and,
// for a choice, the allowed values.
func (c *Config) Validate() error {
	var errs []error
	errs = append(errs, c.validateDimensions()...)
	if c.Histogram.Exponential != nil && c.Histogram.Explicit != nil {
		errs = append(errs, errors.New("histogram: set exponential or explicit, not both"))
	}
	if e := c.Histogram.Exponential; e != nil && e.MaxSize != 0 && (e.MaxSize < 2 || e.MaxSize > 16384) {
		errs = append(errs, fmt.Errorf("histogram.exponential.max_size: %d must be between 2 and 16384 (default %d)", e.MaxSize, defaultMaxSize))
	}
	if x := c.Histogram.Explicit; x != nil {
		for _, kind := range slices.Sorted(maps.Keys(x.Buckets)) {
			if !slices.Contains(bucketKinds, kind) {
				errs = append(errs, fmt.Errorf("histogram.explicit.buckets: unknown kind %q: allowed values are %s", kind, strings.Join(bucketKinds, ", ")))
				continue
			}
			if !strictlyIncreasing(x.Buckets[kind]) {
				errs = append(errs, fmt.Errorf("histogram.explicit.buckets.%s: must be a non-empty, strictly increasing list", kind))
			}
		}
	}
	errs = append(errs, validatePercentiles(c.Percentiles)...)
	errs = append(errs, validateInputTokenClasses(c.InputTokenClasses)...)
	errs = append(errs, validateMetricNames(c.MetricNames)...)
	errs = append(errs, c.Pressure.validate()...)
	if c.Window < windowSlots*time.Millisecond {
		errs = append(errs, fmt.Errorf("window: %v must be a duration of at least %v, such as 1m", c.Window, windowSlots*time.Millisecond))
	}
	if c.AggregationCardinalityLimit < 0 {
		errs = append(errs, fmt.Errorf("aggregation_cardinality_limit: %d must be 0 (no limit) or positive", c.AggregationCardinalityLimit))
	}
	if c.SeriesExpiration < 0 {
		errs = append(errs, fmt.Errorf("series_expiration: %v must not be negative (0: never)", c.SeriesExpiration))
	}
	if c.AggregationTemporality != temporalityCumulative && c.AggregationTemporality != temporalityDelta {
		errs = append(errs, fmt.Errorf("aggregation_temporality: %q: allowed values are %s, %s", c.AggregationTemporality, temporalityCumulative, temporalityDelta))
	}
	if c.MetricsFlushInterval < minFlushInterval {
		errs = append(errs, fmt.Errorf("metrics_flush_interval: %v must be at least %v (default 5s): each flush emits every series", c.MetricsFlushInterval, minFlushInterval))
	}
	if n := c.Exemplars.MaxPerDataPoint; n < 1 || n > maxExemplars {
		errs = append(errs, fmt.Errorf("exemplars.max_per_data_point: %d must be between 1 and %d (default %d)", n, maxExemplars, defaultExemplars))
	}
	if c.AttributeValueLengthLimit < 0 {
		errs = append(errs, fmt.Errorf("attribute_value_length_limit: %d must be 0 (no limit) or positive", c.AttributeValueLengthLimit))
	}
	if n := c.MaxAdjustedCount; !(n >= 1 && n <= adjusted.MaxCount) {
		errs = append(errs, fmt.Errorf("max_adjusted_count: %v must be between 1 and %v (default %v; 1 counts every sampled span as one request)", n, float64(adjusted.MaxCount), float64(defaultMaxAdjustedCount)))
	}
	return errors.Join(errs...)
}

// validateDimensions refuses empty, repeated and default dimensions.
func (c *Config) validateDimensions() []error {
	var errs []error
	seen := map[string]bool{}
	for i, d := range c.Dimensions {
		switch {
		case d.Name == "":
			errs = append(errs, fmt.Errorf("dimensions[%d].name: must not be empty", i))
		case slices.Contains(builtinDimensions, d.Name) || d.Name == c.prefixOrDefault()+contract.SuffixLayer:
			errs = append(errs, fmt.Errorf("dimensions[%d].name: %q is a default dimension already", i, d.Name))
		case d.Name == attrInputClass && len(c.InputTokenClasses) > 0:
			errs = append(errs, fmt.Errorf("dimensions[%d].name: %q is input_token_classes' label already", i, d.Name))
		case seen[d.Name]:
			errs = append(errs, fmt.Errorf("dimensions[%d].name: %q is listed twice", i, d.Name))
		}
		seen[d.Name] = true
	}
	for i, name := range c.ResourceDimensions {
		switch {
		case name == "":
			errs = append(errs, fmt.Errorf("resource_dimensions[%d]: must not be empty", i))
		case seen[name]:
			errs = append(errs, fmt.Errorf("resource_dimensions[%d]: %q is listed twice", i, name))
		}
		seen[name] = true
	}
	return errs
}

// prefixOrDefault is the configured prefix, or the default one.
func (c *Config) prefixOrDefault() string {
	if c.AttributePrefix != "" {
		return c.AttributePrefix
	}
	return contract.DefaultPrefix
}

// minFlushInterval is the shortest metrics_flush_interval: a flush visits
// every series (4,000 at the default limit), and 1ns burnt more than a core
// doing nothing else.
const minFlushInterval = time.Second

// validatePercentiles refuses percentiles outside (0, 100), and answers
// fractions (values <= 1, such as 0.99) with the list in percent.
func validatePercentiles(ps []float64) []error {
	if len(ps) == 0 {
		return []error{errors.New("percentiles: must not be empty (default [50, 90, 99])")}
	}
	var errs []error
	fractions := false
	for _, p := range ps {
		switch {
		case !(p > 0 && p < 100):
			errs = append(errs, fmt.Errorf("percentiles: %v must be between 0 and 100 (exclusive)", p))
		case p <= 1:
			fractions = true
		}
	}
	if fractions {
		written := make([]string, len(ps))
		meant := make([]string, len(ps))
		for i, p := range ps {
			written[i] = strconv.FormatFloat(p, 'g', -1, 64)
			if p > 0 && p <= 1 {
				p *= 100
			}
			meant[i] = strconv.FormatFloat(p, 'g', 10, 64)
		}
		errs = append(errs, fmt.Errorf("percentiles: [%s]: percentiles are given in percent: did you mean %s?",
			strings.Join(written, ", "), strings.Join(meant, ", ")))
	}
	return errs
}

func createDefaultConfig() component.Config {
	return &Config{
		ResourceDimensions:          []string{keyServiceName},
		Percentiles:                 []float64{50, 90, 99},
		Window:                      time.Minute,
		AggregationCardinalityLimit: 2000,
		SeriesExpiration:            5 * time.Minute,
		AggregationTemporality:      temporalityCumulative,
		MetricsFlushInterval:        5 * time.Second,
		CollectorInstanceID:         true,
		AttributeValueLengthLimit:   256,
		MetricNames:                 metricNamesV141,
		SamplingAdjustedCounts:      true,
		MaxAdjustedCount:            defaultMaxAdjustedCount,
		Exemplars:                   ExemplarsConfig{MaxPerDataPoint: defaultExemplars},
		Pressure:                    PressureConfig{Quantile: defaultPressureQuantile, MinRequests: defaultPressureMinRequests},
	}
}

func strictlyIncreasing(b []float64) bool {
	for i := 1; i < len(b); i++ {
		if !(b[i] > b[i-1]) {
			return false
		}
	}
	return len(b) > 0
}

// sketchAlpha is the relative accuracy of the windowed percentiles: each
// order statistic within 0.39% (89 buckets per octave), so the
// interpolated percentile is too, inside the 1% the project promises.
const sketchAlpha = 0.0039

// shapeOf is how the series record: exponential histograms of max_size
// buckets, or explicit with the configured bounds per kind; the windows'
// sketches and length; the token counters when the names have them; the
// exemplars when on.
func shapeOf(cfg *Config, names *metricNames) series.Shape {
	shape := series.Shape{MaxSize: defaultMaxSize, Sketch: aggregate.NewSketchConfig(sketchAlpha), Window: cfg.Window,
		Usage: names.counters(), Exemplars: cfg.Exemplars.Enabled, MaxExemplars: cfg.Exemplars.MaxPerDataPoint}
	if e := cfg.Histogram.Exponential; e != nil && e.MaxSize != 0 {
		shape.MaxSize = e.MaxSize
	}
	if x := cfg.Histogram.Explicit; x != nil {
		var b [numHistKinds][]float64
		for k := range numHistKinds {
			kind := histBucketKind[k]
			b[k] = defaultBuckets[kind]
			if custom, ok := x.Buckets[kind]; ok {
				b[k] = custom
			}
		}
		shape.Bounds = &b
	}
	return shape
}
