// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

// Package schema is the report's data: what the engine (package report)
// computes, what every renderer reads, and its JSON layout,
// llmslo.report/v1. It sits apart from both so that each depends only on
// it: the engine's tests render, and the renderers' tests run the engine.
package schema

import (
	"math"
	"strconv"
)

// SchemaVersion names the JSON layout below. It changes only when a field
// is removed or changes meaning; new fields may be added within a version.
const SchemaVersion = "llmslo.report/v1"

// Report is the whole report, and its JSON form (docs/report.md, "Formats",
// documents every field). Durations are seconds, counts are
// integers, ratios are between 0 and 1, and a value that does not exist
// (the P99 of no values) is null.
type Report struct {
	Schema string `json:"schema"`
	// Inputs are the files read, as given.
	Inputs []string `json:"inputs"`
	// Processor is the collector configuration's processor whose settings
	// were applied ("" for the built-in defaults).
	Processor string `json:"processor"`
	// GroupBy lists the dimensions of every group below.
	GroupBy []string `json:"group_by"`
	// MaxGroups bounds the groups; OverflowRequests counts the requests of
	// groups past it, reported together in the overflow group (0: none).
	MaxGroups        int   `json:"max_groups"`
	OverflowRequests int64 `json:"overflow_requests"`
	// Spans is every span read; Requests the LLM request spans among them
	// (those the processor recognized), Failed those with error status.
	Spans    int64 `json:"spans"`
	Requests int64 `json:"requests"`
	Failed   int64 `json:"failed"`
	// Start and End bracket the requests (earliest span start, latest span
	// end, RFC 3339); Duration is End - Start in seconds: the denominator of
	// every rate.
	Start    string `json:"start,omitempty"`
	End      string `json:"end,omitempty"`
	Duration Num    `json:"duration"`

	SLOs        []SLOReport       `json:"slos"`
	Attribution []Attribution     `json:"attribution"`
	Latency     []LatencyGroup    `json:"latency"`
	Definitions Definitions       `json:"definitions"`
	Sweep       []SweepCurve      `json:"sweep"`
	Slowest     map[string][]Slow `json:"slowest"`
	Timeline    []Timeline        `json:"timeline"`

	// CapacityBy lists the resource attributes that name a request's
	// replica, the first present wins; CapacityMinRequests is the fewest
	// requests a load level holds before adjacent levels are merged.
	CapacityBy          []string `json:"capacity_by"`
	CapacityMinRequests int      `json:"capacity_min_requests"`
	// CapacityUnplaced counts the server-layer requests left out of
	// Capacity: no CapacityBy attribute on their resource, no start time,
	// or a replica past the report's bound on replicas.
	CapacityUnplaced int64 `json:"capacity_unplaced"`
	// Capacity is goodput by load per replica, one entry per SLO with an
	// objective and group with server-layer requests on a known replica.
	Capacity []Capacity `json:"capacity"`

	// CDFs are thinned sorted values per group and metric, for the HTML
	// plots only: not part of the JSON.
	CDFs []CDF `json:"-"`
}

// CDF is a few hundred evenly spaced order statistics of one metric in one
// group, enough to draw its distribution.
type CDF struct {
	Metric string
	Group  Group
	// Requests are the group's: plots of many groups draw the largest.
	Requests int64
	// Sorted is a thinned sample of the values, for drawing.
	Sorted []float64
	// Values and Zeros count the group's values and those at or below 0
	// (which a log axis cannot draw) before thinning: the share of zeros
	// in Sorted is only an estimate.
	Values, Zeros int64
}

// MetricIDs are the latency metrics of LatencyGroup.Metrics and
// Report.Slowest, in report order.
var MetricIDs = []string{"ttft", "tpot", "itl", "e2e", "queue_time"}

// What an SLO's goodput divides by (SLOReport.Denominator).
const (
	DenominatorRequests  = "requests"
	DenominatorDecidable = "decidable requests"
)

// SweepScales are the factors of the SLO sweep: 2^(k/4) for k = -8..8,
// 0.25x to 4x.
func SweepScales() []float64 {
	var s []float64
	for k := -8; k <= 8; k++ {
		s = append(s, math.Exp2(float64(k)/4))
	}
	return s
}

// Group names one group by its dimension values ({} is every request).
type Group map[string]string

// OverflowKey marks the overflow group, {"otel.metric.overflow": "true"}:
// the requests of every group past --max-groups, named as the collector's
// cardinality limits name their overflow series.
const OverflowKey = "otel.metric.overflow"

// IsOverflow reports whether g is the overflow group.
func (g Group) IsOverflow() bool { return g[OverflowKey] == "true" }

// SLOReport is one SLO's goodput, overall and per group.
type SLOReport struct {
	Name string `json:"name"`
	// Constraints are the thresholds by constraint id (ttft, tpot, itl, e2e,
	// queue_time), seconds.
	Constraints map[string]float64 `json:"constraints"`
	// UnknownVerdicts is the SLO's policy, "bad" or "exclude"; Denominator
	// names what its goodput divides by: "requests" or "decidable requests"
	// (met + violated).
	UnknownVerdicts string `json:"unknown_verdicts"`
	Denominator     string `json:"denominator"`
	// Objective is the share of selected requests that must meet the SLO,
	// between 0 and 1; null when the configuration gives none.
	Objective Num `json:"objective"`
	// Groups: the first is every request the SLO selected, then one per
	// group that has any.
	Groups []SLOGroup `json:"groups"`
}

// SLOGroup is the goodput of one SLO over one group of requests.
type SLOGroup struct {
	Group Group `json:"group"`
	// Requests the SLO selected; Met + Violated + Unknown = Requests.
	Requests int64 `json:"requests"`
	Met      int64 `json:"met"`
	Violated int64 `json:"violated"`
	Unknown  int64 `json:"unknown"`
	// Goodput = Met / Requests (unknown verdicts are never good), or
	// Met / (Met + Violated) for an SLO with unknown_verdicts: exclude, with
	// its Wilson score 95% confidence interval [low, high].
	Goodput     Num    `json:"goodput"`
	GoodputCI95 [2]Num `json:"goodput_ci95"`
	// GoodPerSecond is Met over the report's Duration.
	GoodPerSecond Num `json:"good_per_second"`
	// OutputTokens of the selected requests, OutputTokensMet of those that
	// met the SLO; TokenGoodput = OutputTokensMet / OutputTokens, and
	// GoodTokensPerSecond = OutputTokensMet / Duration.
	OutputTokens        int64 `json:"output_tokens"`
	OutputTokensMet     int64 `json:"output_tokens_met"`
	TokenGoodput        Num   `json:"token_goodput"`
	GoodTokensPerSecond Num   `json:"good_tokens_per_second"`
	// Violations counts requests by failed constraint ("error" for failed
	// requests) and by undecidable constraint ("ttft:unknown"); a request
	// counts once under each.
	Violations map[string]int64 `json:"violations"`
	// Combinations counts violated requests by their exact set of failed
	// constraints, most frequent first.
	Combinations []Combination `json:"combinations"`
	// Attainable is the goodput if one constraint were dropped (the others
	// and errors still apply), by constraint id: what fixing it would buy;
	// over the same denominator as Goodput (under exclude, the requests
	// still decidable without that constraint).
	Attainable map[string]Num `json:"attainable"`
}

// Combination is one set of failed constraints and how many requests
// failed exactly those.
type Combination struct {
	Constraints []string `json:"constraints"`
	Requests    int64    `json:"requests"`
}

// Attribution is why one SLO's requests missed: its failed constraints by
// the cause the processor named (llm.slo.<name>.causes), and its slowest
// misses with the parts of their latency.
type Attribution struct {
	SLO string `json:"slo"`
	// Groups: the first is every request the SLO selected, then one per
	// group with a failed constraint.
	Groups []AttributionGroup `json:"groups"`
	// Slowest are the SLO's requests that failed a constraint, by E2E
	// (the span's duration without one), slowest first.
	Slowest []SlowMiss `json:"slowest"`
}

// AttributionGroup is one group's failed constraints by cause.
type AttributionGroup struct {
	Group Group `json:"group"`
	// Constraints lists each constraint some request of the group failed,
	// in constraint order.
	Constraints []ConstraintCauses `json:"constraints"`
}

// ConstraintCauses is why one constraint failed.
type ConstraintCauses struct {
	Constraint string `json:"constraint"`
	// Misses counts the requests that failed it; Causes sum to it.
	Misses int64 `json:"misses"`
	// Causes, most requests first (the closed set's order on a tie).
	Causes []CauseCount `json:"causes"`
}

// CauseNone is the cause of a failed constraint whose span names none (an
// entry missing, or outside the closed set).
const CauseNone = "none"

// CauseCount is how many of a constraint's misses had one cause.
type CauseCount struct {
	// Cause is one of queue, prefill, kv_transfer, network, decode,
	// output_length, unattributed, or CauseNone.
	Cause    string `json:"cause"`
	Requests int64  `json:"requests"`
	// Share = Requests / Misses, with its Wilson score 95% interval.
	Share     Num    `json:"share"`
	ShareCI95 [2]Num `json:"share_ci95"`
}

// PartIDs are the parts of a slow miss's latency (SlowMiss.Parts), in the
// order a request spends them; "rest" is E2E less the known parts.
var PartIDs = []string{"queue", "prefill", "kv_transfer", "network", "decode", "rest"}

// SlowMiss is one request that failed a constraint, with its parts.
type SlowMiss struct {
	TraceID string `json:"trace_id"`
	SpanID  string `json:"span_id"`
	Group   Group  `json:"group"`
	Start   string `json:"start"`
	// Violations are its failed constraints ("error" too, when it failed),
	// Causes their llm.slo.<name>.causes entries.
	Violations []string `json:"violations"`
	Causes     []string `json:"causes"`
	TTFT       Num      `json:"ttft"`
	E2E        Num      `json:"e2e"`
	// Parts by PartIDs, seconds, null where the span does not carry the
	// part: queue (llm.queue_time, else llm.server.queue_time on a client
	// span), prefill, kv_transfer, network, decode (llm.<part>_time) and
	// rest, E2E less the known parts (0 when they exceed it: the engine's
	// clock is not the frontend's).
	Parts map[string]Num `json:"parts"`
}

// LatencyGroup holds the exact distributions of one group.
type LatencyGroup struct {
	Group    Group `json:"group"`
	Requests int64 `json:"requests"`
	// Metrics by id: ttft, tpot, e2e, queue_time (one value per request
	// that has it) and itl (every inter-token gap, pooled over requests).
	Metrics map[string]Dist `json:"metrics"`
}

// Dist summarizes values: numpy's mean and its default ("linear")
// percentiles. Exact is false only for pooled gaps beyond the memory budget
// (--max-gaps), which come from a sketch within 1%.
type Dist struct {
	Count int64 `json:"count"`
	Mean  Num   `json:"mean"`
	P50   Num   `json:"p50"`
	P90   Num   `json:"p90"`
	P99   Num   `json:"p99"`
	P999  Num   `json:"p99_9"`
	Max   Num   `json:"max"`
	Exact bool  `json:"exact"`
}

// Definitions are TTFT, TPOT, ITL and E2E as each benchmark tool defines
// them, over the same requests: the successful streamed requests whose
// spans carry per-chunk timing (chunk events).
type Definitions struct {
	Requests int64      `json:"requests"`
	Tools    []ToolDefs `json:"tools"`
}

// ToolDefs is one tool's metrics.
type ToolDefs struct {
	// Tool id: vllm, aiperf, llmperf, guidellm, sglang, distserve, llmslo.
	Tool string `json:"tool"`
	Name string `json:"name"`
	// Source names the code the formulas come from.
	Source string `json:"source"`
	// Differs says in one line what this tool counts differently.
	Differs string `json:"differs"`
	// Percentiles names the percentile method.
	Percentiles string `json:"percentiles"`
	// Metrics by the tool's own name for them (ttft, tpot, itl, e2e): the
	// same id can mean different things in two tools, which is the point.
	Metrics map[string]ToolMetric `json:"metrics"`
}

// ToolMetric is one metric of one tool.
type ToolMetric struct {
	// Label is the tool's own name for the metric.
	Label string `json:"label"`
	// Formula per request (or per gap), in the notation of docs/processor.md.
	Formula string `json:"formula"`
	// Weighting: "request", "gap", or the weight GuideLLM applies.
	Weighting string `json:"weighting"`
	Count     int64  `json:"count"`
	Mean      Num    `json:"mean"`
	P50       Num    `json:"p50"`
	P90       Num    `json:"p90"`
	P99       Num    `json:"p99"`
	Exact     bool   `json:"exact"`
}

// SweepCurve is one SLO's goodput with every threshold scaled by the same
// factor (DistServe's "SLO scale"), over one group.
type SweepCurve struct {
	SLO    string       `json:"slo"`
	Group  Group        `json:"group"`
	Points []SweepPoint `json:"points"`
}

// SweepPoint is the goodput at one scale.
type SweepPoint struct {
	Scale   float64 `json:"scale"`
	Met     int64   `json:"met"`
	Goodput Num     `json:"goodput"`
}

// Slow is one of the slowest requests by a metric.
type Slow struct {
	TraceID string `json:"trace_id"`
	SpanID  string `json:"span_id"`
	Value   Num    `json:"value"`
	Group   Group  `json:"group"`
	Start   string `json:"start"`
}

// Timeline is one SLO's verdicts over time.
type Timeline struct {
	SLO string `json:"slo"`
	// Step is the bucket width in seconds; bucket i starts at the report's
	// Start + i*Step (by request start time).
	Step    float64          `json:"step"`
	Buckets []TimelineBucket `json:"buckets"`
}

// TimelineBucket counts verdicts in one time bucket.
type TimelineBucket struct {
	Met      int64 `json:"met"`
	Violated int64 `json:"violated"`
	Unknown  int64 `json:"unknown"`
}

// Capacity is one SLO's goodput on one group's server-layer requests by
// the load each met on arrival: the requests of its replica in flight at
// its start, itself included.
type Capacity struct {
	SLO   string `json:"slo"`
	Group Group  `json:"group"`
	// ReplicaKey names the attribute that told the replicas apart (several,
	// comma-separated, when requests differed in which one they carry).
	ReplicaKey string `json:"replica_key"`
	// Levels in ascending order of load.
	Levels []CapacityLevel `json:"levels"`
	// Knee is KneeFound, KneeNotReached or KneeNone; KneeInFlight is the
	// highest load that holds the objective when found, else null.
	KneeInFlight *int64 `json:"knee_in_flight"`
	Knee         string `json:"knee"`
	// PeakInFlight is the most of the group's requests in flight at once
	// across its replicas; P99InFlight the level that total stays at or
	// under for 99% of the report's duration.
	PeakInFlight int64 `json:"peak_in_flight"`
	P99InFlight  int64 `json:"p99_in_flight"`
	// ReplicasObserved served the group's requests; ReplicasNeeded is
	// ceil(PeakInFlight / KneeInFlight), ReplicasNeededP99 the same at
	// P99InFlight: null unless the knee is found.
	ReplicasObserved  int64  `json:"replicas_observed"`
	ReplicasNeeded    *int64 `json:"replicas_needed"`
	ReplicasNeededP99 *int64 `json:"replicas_needed_p99"`
}

// The knee's verdicts (Capacity.Knee).
const (
	// KneeFound: a level fails the objective; the knee is the level below.
	KneeFound = "found"
	// KneeNotReached: every observed level holds the objective.
	KneeNotReached = "not_reached"
	// KneeNone: even the lowest level fails it.
	KneeNone = "none"
)

// CapacityLevel is the goodput of the requests that met one load, or a
// range of loads merged to hold enough requests.
type CapacityLevel struct {
	// InFlight is the level, or the lowest of a merged range;
	// InFlightMax the highest, equal when not merged.
	InFlight    int64 `json:"in_flight"`
	InFlightMax int64 `json:"in_flight_max"`
	// Requests is the goodput's denominator (under unknown_verdicts:
	// exclude, the decidable requests); Goodput = Met / Requests with its
	// Wilson score 95% interval [CILow, CIHigh].
	Requests int64 `json:"requests"`
	Met      int64 `json:"met"`
	Goodput  Num   `json:"goodput"`
	CILow    Num   `json:"ci_low"`
	CIHigh   Num   `json:"ci_high"`
}

// Num is a float64 that is null in JSON when it is NaN or infinite, and
// otherwise written in the shortest form that reads back to the same bits.
type Num float64

// NaN is the missing value.
func NaN() Num { return Num(math.NaN()) }

// Valid reports whether n is a number.
func (n Num) Valid() bool { return !math.IsNaN(float64(n)) && !math.IsInf(float64(n), 0) }

// MarshalJSON implements json.Marshaler.
func (n Num) MarshalJSON() ([]byte, error) {
	if !n.Valid() {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, float64(n), 'g', -1, 64), nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (n *Num) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = NaN()
		return nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	*n = Num(f)
	return err
}
