// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package slorules

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/llmslo/llmslo/internal/promtime"
	"github.com/llmslo/llmslo/internal/slo"
	"github.com/llmslo/llmslo/tools/internal/promname"
)

// promtool finds Prometheus's promtool (Debian package prometheus). Under
// CI a missing promtool fails the test: these are the proof the rules work.
func promtool(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("promtool is not installed (apt-get install prometheus)")
		}
		t.Skip("promtool is not installed (apt-get install prometheus)")
	}
	return bin
}

// writeRules writes the rule file of slos under o into dir.
func writeRules(t *testing.T, dir string, slos []SLO, o Options) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, Write(&b, "prometheus", "test", slos, o))
	path := filepath.Join(dir, "rules.yaml")
	require.NoError(t, os.WriteFile(path, b.Bytes(), 0o600))
	return path
}

func runPromtool(t *testing.T, args ...string) {
	t.Helper()
	out, err := exec.Command(promtool(t), args...).CombinedOutput()
	require.NoError(t, err, "promtool %s:\n%s", strings.Join(args, " "), out)
	t.Logf("promtool %s:\n%s", args[0]+" "+args[1], out)
}

// TestPromtoolCheckRules: promtool accepts the rule files llmslo writes,
// with and without the guard and the test divisor, for several SLOs and
// periods (the llmslo command's tests check the example configurations).
func TestPromtoolCheckRules(t *testing.T) {
	promtool(t)
	dir := t.TempDir()
	var files []string
	slos := slosOf(t, twoProcessors...)
	for i, o := range []Options{{}, {MinRequests: 20, WindowDivisor: 60, Matchers: []string{`deployment_environment_name="prod"`}}} {
		sub := filepath.Join(dir, fmt.Sprint(i))
		require.NoError(t, os.Mkdir(sub, 0o700))
		files = append(files, writeRules(t, sub, slos, o))
	}
	runPromtool(t, append([]string{"check", "rules"}, files...)...)
}

// phase is a stretch of constant traffic: minutes long, per minute.
type phase struct{ minutes, perMinute float64 }

// counterFrom writes the values of a counter that grows by perMinute each
// minute of each phase, in promtool's series notation.
//
// It starts at base, as a counter that existed before the test does.
func counterFrom(base float64, phases ...phase) string {
	var parts []string
	v := base
	for i, p := range phases {
		start := v
		if i > 0 {
			start += p.perMinute
		}
		parts = append(parts, fmt.Sprintf("%v+%vx%v", start, p.perMinute, p.minutes))
		v = start + p.perMinute*p.minutes
	}
	return strings.Join(parts, " ")
}

// replica gives the two counters of SLO interactive on one collector replica and
// model: requests and met, per phase as {minutes, requests/min, error
// ratio}.
func replica(instance, model string, phases ...[3]float64) []map[string]string {
	return replicaFrom(0, instance, model, phases...)
}

// replicaFrom is replica with both counters starting at base.
func replicaFrom(base float64, instance, model string, phases ...[3]float64) []map[string]string {
	var total, met []phase
	for _, p := range phases {
		total = append(total, phase{p[0], p[1]})
		met = append(met, phase{p[0], p[1] * (1 - p[2])})
	}
	labels := fmt.Sprintf(`{llm_slo_name="interactive",collector_instance_id=%q,gen_ai_request_model=%q,llm_layer="server"}`, instance, model)
	return []map[string]string{
		{"series": promname.SLORequests + labels, "values": counterFrom(base, total...)},
		{"series": promname.SLOMet + labels, "values": counterFrom(base, met...)},
	}
}

// sloLabels are the labels of every recorded series of the SLO.
func sloLabels(o Options, s *SLO) map[string]string { return o.idLabels(s) }

// expAlert is what promtool must see firing, annotations expanded, when
// no violation carried a cause.
func expAlert(o Options, s *SLO, severity string) map[string]any {
	return expAlertCause(o, s, severity, noCause)
}

// noCause is the top cause's sentence rendered without a violation that
// carries a cause.
const noCause = "none recorded (no violation carried a cause)"

// expAlertCause is expAlert with the top cause's query rendered as top.
func expAlertCause(o Options, s *SLO, severity, top string) map[string]any {
	labels := with(sloLabels(o, s), "severity", severity, "sloth_severity", severity)
	ann := o.annotations(s, Windows[map[string]int{"page": 0, "ticket": 1}[severity]])
	ann["title"] = strings.NewReplacer("{{$labels.sloth_service}}", o.service(), "{{$labels.sloth_slo}}", s.Name).Replace(ann["title"])
	d := ann["description"]
	from, to := strings.Index(d, "{{ range "), strings.LastIndex(d, "{{ end }}")
	ann["description"] = d[:from] + top + d[to+len("{{ end }}"):]
	return map[string]any{"exp_labels": labels, "exp_annotations": ann}
}

// TestPromtoolRules runs promtool's rule unit tests on synthetic series of
// the connector's counters, one SLO at 99% over 30 days (error budget 1%):
//   - healthy (0.5% errors for a day): no alert;
//   - a 20x burn (20% errors) after two healthy days (so that the 3d window
//     stays under the ticket's 1x): the page fires when the 1h window crosses 14.4x, 43 minutes in (2% of 30 days at 20x): not
//     at 42 minutes, firing at 44 (the alert group may read the recording
//     groups' previous evaluation, a minute late); the 5m SLI is 20% exactly;
//   - a 2x burn: the ticket fires, the page does not;
//   - 100% errors at 2 requests per 5 minutes: with the default guard (20
//     requests) no page (the ticket still fires); without it, a page;
//   - a fresh deployment, 3 requests a minute from the first, a third of
//     them failing: with the default guard no page in its first 15
//     requests, 5 minutes in (the ticket fires); without it, a page;
//   - two collector replicas at different rates and error ratios: the SLI
//     is the pooled ratio (30 errors in 1,500 requests = 2%), not the mean
//     of the replicas' ratios (2.5%).
func TestPromtoolRules(t *testing.T) {
	promtool(t)
	slos := slosOf(t, llmSLO(
		slo.Definition{Name: "interactive", Objective: 99, Period: 30 * promtime.Day, Bounds: []slo.Bound{ms(slo.TTFT, 500), ms(slo.TPOT, 15), ms(slo.E2E, 2000)}},
	))
	s := &slos[0]
	for _, guard := range []float64{0, DefaultMinRequests} {
		o := Options{MinRequests: guard}
		dir := t.TempDir()
		writeRules(t, dir, slos, o)
		sli := func(window string) string {
			return "slo:sli_error:ratio_rate" + window + promLabels(with(sloLabels(o, s), "sloth_window", window))
		}
		type test map[string]any
		tests := []test{
			{ // healthy
				"interval": "1m",
				"input_series": append(replica("a", "m1", [3]float64{1440, 600, 0.005}),
					replica("b", "m2", [3]float64{1440, 300, 0.005})...),
				"alert_rule_test": []any{
					map[string]any{"eval_time": "30m", "alertname": AlertName, "exp_alerts": []any{}},
					map[string]any{"eval_time": "6h", "alertname": AlertName, "exp_alerts": []any{}},
					map[string]any{"eval_time": "1d", "alertname": AlertName, "exp_alerts": []any{}},
				},
			},
			{ // 20x burn after two healthy days
				"interval":     "1m",
				"input_series": replica("a", "m1", [3]float64{2880, 600, 0.005}, [3]float64{120, 600, 0.2}),
				"alert_rule_test": []any{
					map[string]any{"eval_time": "2d42m", "alertname": AlertName, "exp_alerts": []any{}},
					map[string]any{"eval_time": "2d44m", "alertname": AlertName, "exp_alerts": []any{expAlert(o, s, "page")}},
				},
				"promql_expr_test": []any{map[string]any{
					"expr": "slo:sli_error:ratio_rate5m", "eval_time": "2d30m",
					"exp_samples": []any{map[string]any{"labels": sli("5m"), "value": 0.2}},
				}},
			},
			{ // 2x burn: ticket, not page
				"interval":     "1m",
				"input_series": replica("a", "m1", [3]float64{480, 600, 0.02}),
				"alert_rule_test": []any{
					map[string]any{"eval_time": "7h", "alertname": AlertName, "exp_alerts": []any{expAlert(o, s, "ticket")}},
				},
			},
			{ // low traffic: 2 requests per 5 minutes, all failing
				"interval":     "1m",
				"input_series": replica("a", "m1", [3]float64{480, 0.4, 1}),
				"alert_rule_test": []any{map[string]any{"eval_time": "7h", "alertname": AlertName, "exp_alerts": func() []any {
					if guard > 0 {
						return []any{expAlert(o, s, "ticket")}
					}
					return []any{expAlert(o, s, "page"), expAlert(o, s, "ticket")}
				}()}},
			},
			{ // a fresh deployment: 3 requests a minute from the first, one failing
				"interval":     "1m",
				"input_series": replica("a", "m1", [3]float64{15, 3, 1.0 / 3}),
				"alert_rule_test": []any{map[string]any{"eval_time": "5m", "alertname": AlertName, "exp_alerts": func() []any {
					if guard > 0 {
						return []any{expAlert(o, s, "ticket")}
					}
					return []any{expAlert(o, s, "page"), expAlert(o, s, "ticket")}
				}()}},
			},
			{ // two replicas: the pooled ratio
				"interval": "1m",
				"input_series": append(replica("3c1e", "m1", [3]float64{60, 1000, 0.01}),
					replica("9f02", "m1", [3]float64{60, 500, 0.04})...),
				"promql_expr_test": []any{map[string]any{
					"expr": "slo:sli_error:ratio_rate5m", "eval_time": "30m",
					"exp_samples": []any{map[string]any{"labels": sli("5m"), "value": 0.02}},
				}, map[string]any{
					"expr": "slo:sli_error:ratio_rate30m", "eval_time": "30m",
					"exp_samples": []any{map[string]any{"labels": sli("30m"), "value": 0.02}},
				}, map[string]any{
					// Sloth's burn rate keeps the 5m series' sloth_window.
					"expr": "round(slo:current_burn_rate:ratio * 1e6) / 1e6", "eval_time": "30m",
					"exp_samples": []any{map[string]any{"labels": promLabels(with(sloLabels(o, s), "sloth_window", "5m")), "value": 2}},
				}},
			},
		}
		if guard == 0 { // the guard changes only the low-traffic and fresh cases
			tests = tests[3:5]
		}
		b, err := yaml.Marshal(map[string]any{"rule_files": []string{"rules.yaml"}, "evaluation_interval": "1m", "tests": tests})
		require.NoError(t, err)
		path := filepath.Join(dir, "test.yaml")
		require.NoError(t, os.WriteFile(path, b, 0o600))
		runPromtool(t, "test", "rules", path)
	}
}

func promLabels(m map[string]string) string {
	var kv []string
	for _, l := range strings.Split(SortedLabels(m), ",") {
		k, v, _ := strings.Cut(l, "=")
		kv = append(kv, fmt.Sprintf("%s=%q", k, v))
	}
	return "{" + strings.Join(kv, ", ") + "}"
}

// TestPromtoolPeriodRatio runs promtool on the period's error ratio, one
// SLO at 99% over 30 days, each case after 10 quiet minutes of counters
// that existed before it (a counter born at 0 in the first window is read
// with less extrapolation than later ones, which would skew the weights):
//   - quiet gap: 30 minutes at 600 requests/min with 1% errors, 20 minutes
//     without traffic, 30 minutes at 60/min with 50% errors, 10 quiet
//     minutes: the ratio is bad/total = 1,080/19,800, and the budget
//     remaining a number (a mean of the 5m ratios is NaN: the quiet windows
//     are 0/0);
//   - the same gap, then an hour at 60/min with 50% errors: the page and the
//     ticket fire after the gap;
//   - diurnal: two days of 12 hours at 600/min with 0.5% errors and 12 hours
//     at 60/min with 5% errors: bad/total = 4,320/475,200 per day (a mean
//     of the 5m ratios says about 2.75%).
func TestPromtoolPeriodRatio(t *testing.T) {
	promtool(t)
	slos := slosOf(t, llmSLO(
		slo.Definition{Name: "interactive", Objective: 99, Period: 30 * promtime.Day, Bounds: []slo.Bound{ms(slo.TTFT, 500)}},
	))
	s, o := &slos[0], Options{}
	dir := t.TempDir()
	writeRules(t, dir, slos, o)
	rounded := func(expr string, at string, labels map[string]string, want float64) map[string]any {
		return map[string]any{
			"expr": "round(" + expr + " * 1e5) / 1e5", "eval_time": at,
			"exp_samples": []any{map[string]any{"labels": promLabels(labels), "value": math.Round(want*1e5) / 1e5}},
		}
	}
	period := with(sloLabels(o, s), "sloth_window", "30d")
	quiet := [][3]float64{{10, 0, 0}, {30, 600, 0.01}, {20, 0, 0}, {30, 60, 0.5}, {10, 0, 0}}
	day := [][3]float64{{10, 0, 0}, {720, 600, 0.005}, {720, 60, 0.05}, {720, 600, 0.005}, {720, 60, 0.05}, {10, 0, 0}}
	tests := []map[string]any{
		{
			"interval":     "1m",
			"input_series": replicaFrom(1000, "a", "m1", quiet...),
			"promql_expr_test": []any{
				rounded("slo:sli_error:ratio_rate30d", "100m", period, 1080.0/19800),
				rounded("slo:period_error_budget_remaining:ratio", "100m", period, 1-1080.0/19800/0.01),
			},
		},
		{
			"interval":     "1m",
			"input_series": replicaFrom(1000, "a", "m1", [3]float64{10, 0, 0}, [3]float64{30, 600, 0.01}, [3]float64{20, 0, 0}, [3]float64{60, 60, 0.5}),
			"alert_rule_test": []any{
				map[string]any{"eval_time": "120m", "alertname": AlertName,
					"exp_alerts": []any{expAlert(o, s, "page"), expAlert(o, s, "ticket")}},
			},
		},
		{
			"interval":         "1m",
			"input_series":     replicaFrom(1000, "a", "m1", day...),
			"promql_expr_test": []any{rounded("slo:sli_error:ratio_rate30d", "2d20m", period, 4320.0/475200)},
		},
	}
	b, err := yaml.Marshal(map[string]any{"rule_files": []string{"rules.yaml"}, "evaluation_interval": "1m", "tests": tests})
	require.NoError(t, err)
	path := filepath.Join(dir, "test.yaml")
	require.NoError(t, os.WriteFile(path, b, 0o600))
	runPromtool(t, "test", "rules", path)
}

// TestPromtoolUnknownVerdicts: LLMSLOVerdictsUnknown opens a ticket when
// 30% of an SLO's requests over 1h were undecidable (every one for want of
// a TTFT), naming ttft:unknown in its description; at 5% it stays quiet.
func TestPromtoolUnknownVerdicts(t *testing.T) {
	promtool(t)
	slos := slosOf(t, llmSLO(
		slo.Definition{Name: "interactive", Objective: 99, Period: 30 * promtime.Day, Bounds: []slo.Bound{ms(slo.TTFT, 500)}},
	))
	s, o := &slos[0], Options{}
	dir := t.TempDir()
	writeRules(t, dir, slos, o)
	labels := `{llm_slo_name="interactive",collector_instance_id="a",gen_ai_request_model="m1",llm_layer="client"}`
	unknownLabels := `{llm_slo_name="interactive",llm_slo_constraint="ttft:unknown",collector_instance_id="a",gen_ai_request_model="m1",llm_layer="client"}`
	series := func(unknownPerMinute float64) []map[string]string {
		return []map[string]string{
			{"series": promname.SLORequests + labels, "values": counterFrom(0, phase{120, 600})},
			{"series": promname.SLOUnknown + labels, "values": counterFrom(0, phase{120, unknownPerMinute})},
			{"series": promname.SLOViolations + unknownLabels, "values": counterFrom(0, phase{120, unknownPerMinute})},
		}
	}
	rule := o.unknownAlert(s)
	ann := map[string]string{
		"summary": strings.Replace(rule.Annotations["summary"], "{{ $value | humanizePercentage }}", "30%", 1),
		"description": rule.Annotations["description"][:strings.Index(rule.Annotations["description"], "{{ range")] +
			" ttft:unknown (3/s).",
	}
	tests := []map[string]any{
		{"interval": "1m", "input_series": series(180), "alert_rule_test": []any{map[string]any{
			"eval_time": "90m", "alertname": UnknownAlertName, "exp_alerts": []any{map[string]any{
				"exp_labels":      map[string]string{"severity": "ticket", promname.LabelSLOName: "interactive"},
				"exp_annotations": ann,
			}},
		}}},
		{"interval": "1m", "input_series": series(30), "alert_rule_test": []any{map[string]any{
			"eval_time": "90m", "alertname": UnknownAlertName, "exp_alerts": []any{},
		}}},
	}
	b, err := yaml.Marshal(map[string]any{"rule_files": []string{"rules.yaml"}, "evaluation_interval": "1m", "tests": tests})
	require.NoError(t, err)
	path := filepath.Join(dir, "test.yaml")
	require.NoError(t, os.WriteFile(path, b, 0o600))
	runPromtool(t, "test", "rules", path)
}

// TestPromtoolUnknownExcluded runs promtool on two SLOs fed the same
// counters, one with unknown_verdicts: exclude: per minute 600 requests,
// 450 met, 50 violated and 100 unknown, for an hour after 10 quiet minutes
// of counters that existed before. Excluding, every SLI window and the
// period ratio are violated / (met + violated) = 50/500 = 0.1, the budget
// remaining 1 - 0.1/0.01 = -9; counting unknown verdicts as bad, they are
// (600 - 450)/600 = 0.25.
func TestPromtoolUnknownExcluded(t *testing.T) {
	promtool(t)
	slos := slosOf(t, llmSLO(
		slo.Definition{Name: "decidable", Objective: 99, Period: 30 * promtime.Day, Bounds: []slo.Bound{ms(slo.TTFT, 500)}, ExcludeUnknown: true},
		slo.Definition{Name: "interactive", Objective: 99, Period: 30 * promtime.Day, Bounds: []slo.Bound{ms(slo.TTFT, 500)}},
	))
	require.True(t, slos[0].ExcludeUnknown)
	require.False(t, slos[1].ExcludeUnknown)
	o := Options{}
	dir := t.TempDir()
	writeRules(t, dir, slos, o)
	var series []map[string]string
	for _, s := range slos {
		labels := fmt.Sprintf(`{llm_slo_name=%q,collector_instance_id="a",gen_ai_request_model="m1",llm_layer="client"}`, s.Name)
		for _, c := range []struct {
			metric    string
			perMinute float64
		}{{promname.SLORequests, 600}, {promname.SLOMet, 450}, {promname.SLOViolated, 50}, {promname.SLOUnknown, 100}} {
			series = append(series, map[string]string{"series": c.metric + labels, "values": counterFrom(1000, phase{10, 0}, phase{60, c.perMinute})})
		}
	}
	rounded := func(expr string, s *SLO, window string, want float64) map[string]any {
		labels := sloLabels(o, s)
		if window != "" {
			labels = with(labels, "sloth_window", window)
		}
		return map[string]any{
			"expr": "round(" + expr + promLabels(map[string]string{labelSLO: s.Name}) + " * 1e6) / 1e6", "eval_time": "60m",
			"exp_samples": []any{map[string]any{"labels": promLabels(labels), "value": want}},
		}
	}
	var exprs []any
	for i, want := range []float64{50.0 / 500, 150.0 / 600} {
		s := &slos[i]
		for _, w := range []string{"5m", "30m", "1h", "30d"} {
			exprs = append(exprs, rounded("slo:sli_error:ratio_rate"+w, s, w, want))
		}
		exprs = append(exprs, rounded("slo:period_error_budget_remaining:ratio", s, "30d", math.Round((1-want/0.01)*1e6)/1e6))
	}
	tests := []map[string]any{{"interval": "1m", "input_series": series, "promql_expr_test": exprs}}
	b, err := yaml.Marshal(map[string]any{"rule_files": []string{"rules.yaml"}, "evaluation_interval": "1m", "tests": tests})
	require.NoError(t, err)
	path := filepath.Join(dir, "test.yaml")
	require.NoError(t, os.WriteFile(path, b, 0o600))
	runPromtool(t, "test", "rules", path)
}

// TestPromtoolTopCause: the burn-rate page names the constraint and cause
// failing most over its 5m window in each layer, rendered by Prometheus
// from the connector's violations by llm_slo_cause: a 20x burn after two
// healthy days in which e2e:output_length led, the burn's engine TTFT
// misses from the queue (100/min) now lead e2e:output_length (20/min) and
// the failed requests' error (500/min, no cause, left out) on the server
// layer, while the same requests' client spans miss TTFT unattributed
// (150/min): "client ttft:unattributed (2.5 violations/s); server
// ttft:queue (1.67 violations/s)" (summed over the layers, the client's
// unattributed hid the queue). Without any violation carrying a cause (a
// processor that writes no causes), the page says none was recorded.
func TestPromtoolTopCause(t *testing.T) {
	promtool(t)
	slos := slosOf(t, llmSLO(
		slo.Definition{Name: "interactive", Objective: 99, Period: 30 * promtime.Day, Bounds: []slo.Bound{ms(slo.TTFT, 500), ms(slo.TPOT, 15), ms(slo.E2E, 2000)}},
	))
	s, o := &slos[0], Options{Matchers: []string{`env="prod"`}}
	dir := t.TempDir()
	writeRules(t, dir, slos, o)
	series := func(causes bool) []map[string]string {
		in := replica("a", "m1", [3]float64{2880, 600, 0.005}, [3]float64{120, 600, 0.2})
		for i := range in {
			in[i]["series"] = strings.Replace(in[i]["series"], "{", `{env="prod",`, 1)
		}
		violations := func(layer, constraint, cause string, healthy, burn float64) {
			labels := fmt.Sprintf(`{env="prod",llm_slo_name="interactive",llm_slo_constraint=%q,collector_instance_id="a",gen_ai_request_model="m1",llm_layer=%q`, constraint, layer)
			if cause != "" {
				labels += fmt.Sprintf(",llm_slo_cause=%q", cause)
			}
			in = append(in, map[string]string{"series": promname.SLOViolations + labels + "}", "values": counterFrom(0, phase{2880, healthy}, phase{120, burn})})
		}
		violations("server", "error", "", 0, 500)
		if causes {
			violations("server", "ttft", "queue", 0, 100)
			violations("server", "e2e", "output_length", 3, 20)
			violations("client", "ttft", "unattributed", 0, 150)
		} else {
			violations("server", "ttft", "", 0, 100)
		}
		return in
	}
	tests := []map[string]any{
		{"interval": "1m", "input_series": series(true), "alert_rule_test": []any{map[string]any{
			"eval_time": "2d44m", "alertname": AlertName, "exp_alerts": []any{expAlertCause(o, s, "page", "client ttft:unattributed (2.5 violations/s); server ttft:queue (1.67 violations/s)")},
		}}},
		{"interval": "1m", "input_series": series(false), "alert_rule_test": []any{map[string]any{
			"eval_time": "2d44m", "alertname": AlertName, "exp_alerts": []any{expAlert(o, s, "page")},
		}}},
	}
	b, err := yaml.Marshal(map[string]any{"rule_files": []string{"rules.yaml"}, "evaluation_interval": "1m", "tests": tests})
	require.NoError(t, err)
	path := filepath.Join(dir, "test.yaml")
	require.NoError(t, os.WriteFile(path, b, 0o600))
	runPromtool(t, "test", "rules", path)
}
