// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package slorules

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/llmslo/llmslo/internal/promtime"
	"github.com/llmslo/llmslo/tools/internal/promname"
)

// Options shape the generated rules.
type Options struct {
	// Service is Sloth's service, the sloth_service label; default "llmslo".
	Service string
	// MinRequests is the minimum-traffic guard: a page condition holds only
	// when its short window saw at least this many requests of the SLO
	// (0: no guard, as Sloth). Tickets are not guarded. The llmslo command
	// takes DefaultMinRequests unless told otherwise.
	MinRequests float64
	// WindowDivisor divides every window and the period in the PromQL
	// ranges (not in the rule names, labels or factors), so that a test
	// sees in minutes what production sees in hours: with 60, the 1h/5m
	// page reads 1m/5s. Production leaves it at 0 or 1.
	WindowDivisor int
	// UnknownShare is the share of an SLO's requests over 1h whose verdict
	// was undecidable above which LLMSLOVerdictsUnknown opens a ticket;
	// 0 takes DefaultUnknownShare.
	UnknownShare float64
	// Matchers are extra label matchers on the connector's counters, e.g.
	// `deployment_environment_name="prod"`.
	Matchers []string
}

func (o *Options) service() string {
	if o.Service == "" {
		return "llmslo"
	}
	return o.Service
}

// rng is the PromQL range of window d.
func (o *Options) rng(d time.Duration) string {
	if o.WindowDivisor > 1 {
		d /= time.Duration(o.WindowDivisor)
	}
	return promtime.Format(d)
}

// Check validates the options.
func (o *Options) Check(slos []SLO) error {
	if o.MinRequests < 0 || math.IsNaN(o.MinRequests) {
		return fmt.Errorf("the minimum-traffic guard must be 0 or more requests, not %v", o.MinRequests)
	}
	if o.UnknownShare < 0 || o.UnknownShare >= 1 || math.IsNaN(o.UnknownShare) {
		return fmt.Errorf("the share of unknown verdicts that opens a ticket must be between 0 and 1 (default %v), not %v", DefaultUnknownShare, o.UnknownShare)
	}
	if o.WindowDivisor < 0 {
		return fmt.Errorf("the window divisor must be positive, not %d", o.WindowDivisor)
	}
	if o.WindowDivisor > 1 {
		for _, s := range slos {
			for _, w := range append(sliWindows(), s.Period) {
				if w%(time.Duration(o.WindowDivisor)*time.Millisecond) != 0 || w/time.Duration(o.WindowDivisor) < time.Second {
					return fmt.Errorf("window divisor %d: window %s does not divide into whole milliseconds of at least 1s", o.WindowDivisor, promtime.Format(w))
				}
			}
		}
	}
	return nil
}

// RuleFile is a Prometheus rule file.
type RuleFile struct {
	Groups []RuleGroup `yaml:"groups"`
}

// RuleGroup is one group of rules.
type RuleGroup struct {
	Name  string `yaml:"name"`
	Rules []Rule `yaml:"rules"`
}

// Rule is a recording or an alerting rule.
type Rule struct {
	Record      string            `yaml:"record,omitempty"`
	Alert       string            `yaml:"alert,omitempty"`
	Expr        string            `yaml:"expr"`
	Labels      map[string]string `yaml:"labels,omitempty"`
	Annotations map[string]string `yaml:"annotations,omitempty"`
}

// Sloth's names: rule names, labels and group prefixes.
const (
	labelID       = "sloth_id"
	labelService  = "sloth_service"
	labelSLO      = "sloth_slo"
	labelWindow   = "sloth_window"
	labelSeverity = "sloth_severity"

	recObjective       = "slo:objective:ratio"
	recErrorBudget     = "slo:error_budget:ratio"
	recPeriodDays      = "slo:time_period:days"
	recCurrentBurn     = "slo:current_burn_rate:ratio"
	recPeriodBurn      = "slo:period_burn_rate:ratio"
	recBudgetRemaining = "slo:period_error_budget_remaining:ratio"
	recInfo            = "sloth_slo_info"

	// AlertName is the name of every burn-rate alert.
	AlertName = "LLMSLOErrorBudgetBurn"
	// UnknownAlertName is the ticket raised when too many of an SLO's
	// verdicts were undecidable: missing data, not slow requests.
	UnknownAlertName = "LLMSLOVerdictsUnknown"
	// DefaultUnknownShare is Options.UnknownShare's default.
	DefaultUnknownShare = 0.1
	// DefaultMinRequests is the llmslo command's minimum-traffic guard:
	// without one, a fresh deployment pages on its first slow requests,
	// whose share of a nearly empty window is a burn rate far over any
	// factor (one miss in its first three requests is 33% of the 5m
	// window, a burn rate of 33 against a 99% objective, over the page's 14.4).
	DefaultMinRequests = 20
)

// SLIRecord is the name of the SLI error-ratio recording rule of window d,
// as Sloth names it: slo:sli_error:ratio_rate5m, ..._rate30d.
func SLIRecord(d time.Duration) string { return "slo:sli_error:ratio_rate" + promtime.Format(d) }

// ErrorEventsRecord and TotalEventsRecord name the recorded rates, over
// window d, of the requests that did not meet the SLO and of all requests
// it selected: the terms of the period's traffic-weighted error ratio.
func ErrorEventsRecord(d time.Duration) string {
	return "slo:sli_error_events:rate" + promtime.Format(d)
}

// TotalEventsRecord: see ErrorEventsRecord.
func TotalEventsRecord(d time.Duration) string {
	return "slo:sli_total_events:rate" + promtime.Format(d)
}

// Records are the names of the meta recording rules, as Sloth names them.
var Records = struct{ Objective, ErrorBudget, PeriodDays, CurrentBurnRate, PeriodBurnRate, BudgetRemaining string }{
	recObjective, recErrorBudget, recPeriodDays, recCurrentBurn, recPeriodBurn, recBudgetRemaining,
}

// ID is the SLO's sloth_id: "<service>-<name>".
func (o *Options) ID(s *SLO) string { return o.service() + "-" + s.Name }

// idLabels are the labels that identify the SLO on every rule: Sloth's and
// the connector's llm_slo_name.
func (o *Options) idLabels(s *SLO) map[string]string {
	return map[string]string{labelID: o.ID(s), labelService: o.service(), labelSLO: s.Name, promname.LabelSLOName: s.Name}
}

// filter is Sloth's selector of the SLO's own recorded series.
func (o *Options) filter(s *SLO) string {
	return fmt.Sprintf(`{%s=%q, %s=%q, %s=%q}`, labelID, o.ID(s), labelService, o.service(), labelSLO, s.Name)
}

// num writes a number without float noise (0.999, not 0.9990000000000001).
func num(x float64) string {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 12, 64), 64)
	return strconv.FormatFloat(r, 'g', -1, 64)
}

func with(m map[string]string, kv ...string) map[string]string {
	out := make(map[string]string, len(m)+len(kv)/2)
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// Prometheus generates the rule file: per SLO, the SLI recording rules,
// the meta recording rules and the two burn-rate alerts, in Sloth's three
// groups.
func Prometheus(slos []SLO, o Options) (*RuleFile, error) {
	if err := o.Check(slos); err != nil {
		return nil, err
	}
	f := &RuleFile{}
	for i := range slos {
		s := &slos[i]
		id := o.ID(s)
		f.Groups = append(f.Groups,
			RuleGroup{Name: "sloth-slo-sli-recordings-" + id, Rules: o.sliRules(s)},
			RuleGroup{Name: "sloth-slo-meta-recordings-" + id, Rules: o.metaRules(s)},
			RuleGroup{Name: "sloth-slo-alerts-" + id, Rules: o.alertRules(s)})
	}
	return f, nil
}

func (o *Options) sliRules(s *SLO) []Rule {
	labels := o.idLabels(s)
	var rules []Rule
	for _, w := range sliWindows() {
		r := o.rng(w)
		rules = append(rules, Rule{
			Record: SLIRecord(w),
			Expr:   fmt.Sprintf("(%s)\n/\n(%s)\n", s.ErrorQuery(r, o.Matchers), s.TotalQuery(r, o.Matchers)),
			Labels: with(labels, labelWindow, promtime.Format(w)),
		})
	}
	return append(rules, o.periodRules(s)...)
}

// periodRules record the 5m rates of bad and of all requests, and the
// period's error ratio as the sum of the one over the sum of the other:
// bad / all over the period, each request weighing one. This is the one
// deliberate difference from Sloth, which averages the 5m ratios: a mean of
// ratios weighs a quiet window of 2 requests as much as a busy one of
// 10,000, and one window without traffic (0/0 = NaN) makes its mean NaN
// for a whole period. Here a window without traffic adds 0 to both sums;
// the ratio is NaN only when the whole period saw no request.
func (o *Options) periodRules(s *SLO) []Rule {
	labels := o.idLabels(s)
	short := Windows[0].Quick.Short
	r, shortName := o.rng(short), promtime.Format(short)
	errRec, totalRec := ErrorEventsRecord(short), TotalEventsRecord(short)
	filter, p := o.filter(s), o.rng(s.Period)
	return []Rule{
		{Record: errRec, Expr: s.ErrorQuery(r, o.Matchers) + "\n", Labels: with(labels, labelWindow, shortName)},
		{Record: totalRec, Expr: s.TotalQuery(r, o.Matchers) + "\n", Labels: with(labels, labelWindow, shortName)},
		{
			Record: SLIRecord(s.Period),
			Expr: fmt.Sprintf("sum_over_time(%s%s[%s])\n/\nsum_over_time(%s%s[%s])\n",
				errRec, filter, p, totalRec, filter, p),
			Labels: with(labels, labelWindow, promtime.Format(s.Period)),
		},
	}
}

func (o *Options) metaRules(s *SLO) []Rule {
	labels := o.idLabels(s)
	filter := o.filter(s)
	obj := num(s.Objective / 100)
	burn := func(window time.Duration) string {
		return fmt.Sprintf("%s%s\n/ on(%s, %s, %s) group_left\n%s%s\n", SLIRecord(window), filter,
			labelID, labelSLO, labelService, recErrorBudget, filter)
	}
	return []Rule{
		{Record: recObjective, Expr: "vector(" + obj + ")", Labels: labels},
		{Record: recErrorBudget, Expr: "vector(1-" + obj + ")", Labels: labels},
		{Record: recPeriodDays, Expr: "vector(" + num(s.Period.Hours()/24) + ")", Labels: labels},
		{Record: recCurrentBurn, Expr: burn(Windows[0].Quick.Short), Labels: labels},
		{Record: recPeriodBurn, Expr: burn(s.Period), Labels: labels},
		{Record: recBudgetRemaining, Expr: "1 - " + recPeriodBurn + filter, Labels: labels},
		{Record: recInfo, Expr: "vector(1)", Labels: with(labels,
			"sloth_mode", "llmslo", "sloth_spec", "prometheus/v1", "sloth_version", "llmslo",
			"sloth_objective", strconv.FormatFloat(s.Objective, 'f', -1, 64))},
	}
}

func (o *Options) alertRules(s *SLO) []Rule {
	filter := o.filter(s)
	budget := num(1 - s.Objective/100)
	var rules []Rule
	for _, a := range Windows {
		cond := func(w Window) string {
			f := num(w.Factor(s.Period))
			c := fmt.Sprintf("    max(%s%s > (%s * %s)) without (%s)\n    and\n    max(%s%s > (%s * %s)) without (%s)\n",
				SLIRecord(w.Short), filter, f, budget, labelWindow, SLIRecord(w.Long), filter, f, budget, labelWindow)
			if a.Severity == "page" && o.MinRequests > 0 {
				c += fmt.Sprintf("    and on()\n    sum(increase(%s[%s])) >= %s\n",
					s.selector(promname.SLORequests, o.Matchers), o.rng(w.Short), num(o.MinRequests))
			}
			return "(\n" + c + ")"
		}
		rules = append(rules, Rule{
			Alert:       AlertName,
			Expr:        cond(a.Quick) + "\nor\n" + cond(a.Slow) + "\n",
			Labels:      map[string]string{labelSeverity: a.Severity, "severity": a.Severity, promname.LabelSLOName: s.Name},
			Annotations: o.annotations(s, a),
		})
	}
	return append(rules, o.unknownAlert(s))
}

// unknownAlert opens a ticket when more than UnknownShare of the SLO's
// requests over 1h had an undecidable verdict: a producer that does not
// emit a value the SLO reads makes every request unknown, which burns the
// budget as if the requests were slow. Its description names the
// constraints left unknown most often, so the ticket says what is missing.
func (o *Options) unknownAlert(s *SLO) Rule {
	share := o.UnknownShare
	if share == 0 {
		share = DefaultUnknownShare
	}
	w := o.rng(time.Hour)
	top := fmt.Sprintf(`topk(3, sum by (%s) (rate(%s[%s])))`, promname.LabelSLOConstraint,
		strings.TrimSuffix(s.selector(promname.SLOViolations, o.Matchers), "}")+`,`+promname.LabelSLOConstraint+`=~".*:unknown"}`, w)
	return Rule{
		Alert: UnknownAlertName,
		Expr: fmt.Sprintf("sum(rate(%s[%s]))\n/\nsum(rate(%s[%s]))\n> %s\n",
			s.selector(promname.SLOUnknown, o.Matchers), w, s.selector(promname.SLORequests, o.Matchers), w, num(share)),
		Labels: map[string]string{"severity": "ticket", promname.LabelSLOName: s.Name},
		Annotations: map[string]string{
			"summary": fmt.Sprintf("LLM SLO %s cannot judge {{ $value | humanizePercentage }} of its requests.", s.Name),
			"description": fmt.Sprintf("More than %s of the requests of SLO %s (%s) over 1h had an undecidable verdict: "+
				"a value the SLO reads is missing from their spans, so they %s. This is missing data, not slow requests: "+
				"see which producer (llm_metrics_source) leaves it out, and the producer table of the project's docs/producers.md for how to get it. "+
				"Left unknown most often:{{ range query %q }} {{ .Labels.%s }} ({{ .Value | printf \"%%.3g\" }}/s){{ end }}.",
				strconv.FormatFloat(share*100, 'g', -1, 64)+"%", s.Name, s.Description, s.unknownFate(), top, promname.LabelSLOConstraint),
		},
	}
}

// annotations say which SLO, objective and windows, and the top cause;
// title and summary keep Sloth's wording.
func (o *Options) annotations(s *SLO, a Alert) map[string]string {
	ann := alertingAnnotations(s, a, s.topCause(a.Quick.Short, o.rng(a.Quick.Short), o.Matchers))
	if a.Severity == "page" && o.MinRequests > 0 {
		ann["description"] += fmt.Sprintf(" Not raised while the short window holds fewer than %s requests.", num(o.MinRequests))
	}
	return ann
}

// topCause is the sentence of the burn-rate alert's description that names
// the constraint and cause failing most over the alert's short window
// (rng, its PromQL range), in each layer: the first question on a page is
// why, and the cause decides the action (capacity for queue, the prompts
// for prefill, the path for network, the SLO itself for output_length).
// Summed over the layers, a client's unattributed misses (a client span
// sees no engine part) outnumber and hide the engine's queue behind the
// same requests. Prometheus runs the query when it renders the alert;
// violations without a cause (error, :unknown) are left out.
func (s *SLO) topCause(short time.Duration, rng string, extra []string) string {
	layer := s.LayerLabel
	sel := strings.TrimSuffix(s.selector(promname.SLOViolations, extra), "}") + "," + promname.LabelSLOCause + `!=""}`
	q := fmt.Sprintf("topk by (%s) (1, sum by (%s, %s, %s) (rate(%s[%s])))", layer, layer, promname.LabelSLOConstraint, promname.LabelSLOCause, sel, rng)
	return fmt.Sprintf("Top cause over the last %s, per layer: {{ range $i, $c := query %q | sortByLabel %q }}{{ if $i }}; {{ end }}"+
		"{{ $c.Labels.%s }} {{ $c.Labels.%s }}:{{ $c.Labels.%s }} ({{ $c.Value | printf \"%%.3g\" }} violations/s)"+
		"{{ else }}none recorded (no violation carried a cause){{ end }}.", promtime.Format(short), q, layer, layer, promname.LabelSLOConstraint, promname.LabelSLOCause)
}

// alertingAnnotations are the annotations of one severity, as the Sloth
// spec carries them too; the title keeps Sloth's wording. topCause is the
// sentence naming the top cause (SLO.topCause).
func alertingAnnotations(s *SLO, a Alert, topCause string) map[string]string {
	pct := strconv.FormatFloat(s.Objective, 'f', -1, 64)
	period := promtime.Format(s.Period)
	cond := func(w Window) string {
		return fmt.Sprintf("%s times the error budget over both %s and %s", num(w.Factor(s.Period)), promtime.Format(w.Long), promtime.Format(w.Short))
	}
	return map[string]string{
		"title":   fmt.Sprintf("(%s) {{$labels.%s}} {{$labels.%s}} SLO error budget burn rate is too fast.", a.Severity, labelService, labelSLO),
		"summary": fmt.Sprintf("LLM SLO %s (objective %s%% over %s) is burning its error budget too fast.", s.Name, pct, period),
		"description": fmt.Sprintf("Requests fail SLO %s (%s) faster than its %s%% objective over %s allows: "+
			"the error ratio (%s) exceeded %s, or %s. "+
			"The failing constraints: sum by (%s) (rate(%s[5m])). %s",
			s.Name, s.Description, pct, period, s.errorRatioText(), cond(a.Quick), cond(a.Slow),
			promname.LabelSLOConstraint, s.selector(promname.SLOViolations, nil), topCause),
	}
}

// unknownFate says what becomes of an unknown verdict, for the unknown
// alert's description.
func (s *SLO) unknownFate() string {
	if s.ExcludeUnknown {
		return "are left out of the SLI (unknown_verdicts: exclude), which judges only the decidable requests"
	}
	return "count as not met"
}

// errorRatioText says what the error ratio divides, for the annotations.
func (s *SLO) errorRatioText() string {
	if s.ExcludeUnknown {
		return "violated / (met + violated): unknown verdicts excluded, over the decidable requests"
	}
	return "1 - met/requests, unknown verdicts included"
}

// SortedLabels lists a rule's labels as k=v, sorted (for tests and docs).
func SortedLabels(m map[string]string) string {
	var kv []string
	for k, v := range m {
		kv = append(kv, k+"="+v)
	}
	sort.Strings(kv)
	return strings.Join(kv, ",")
}
