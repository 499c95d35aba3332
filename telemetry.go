// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloprocessor

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/llmslo/llmslo/internal/assembly"
	"github.com/llmslo/llmslo/internal/derive"
	"github.com/llmslo/llmslo/internal/metadata"
	"github.com/llmslo/llmslo/internal/slo"
)

// telemetry is the processor's own metrics. Counts are summed per batch in a
// plain array and added to the instruments once per batch, so the per-span
// cost is an array increment.
type telemetry struct {
	requests metric.Int64Counter
	errors   metric.Int64Counter
	verdicts metric.Int64Counter
	// Trace assembly.
	held          metric.Int64Counter
	evictions     metric.Int64Counter
	evictionAttrs [assembly.NumReasons]metric.AddOption

	// Attribute sets, built once.
	requestAttrs [][derive.NumOrigins]metric.AddOption // [preset][origin]
	errorAttrs   [derive.NumFields][derive.NumReasons]metric.AddOption
	verdictAttrs [][numOutcomes]metric.AddOption // [slo][outcome]
}

type outcome uint8

const (
	outcomeMet outcome = iota
	outcomeViolated
	outcomeUnknown
	numOutcomes
)

var outcomeNames = [numOutcomes]string{"met", "violated", "unknown"}

// batchCounts accumulates one batch's telemetry.
type batchCounts struct {
	requests [][derive.NumOrigins]int64
	errors   [derive.NumFields][derive.NumReasons]int64
	verdicts [][numOutcomes]int64
	// unknown feeds the processor's undecidable-constraint warning (watch).
	unknown unknownTally
}

// reset clears the counts for the next batch, keeping the memory.
func (b *batchCounts) reset() {
	clear(b.requests)
	clear(b.errors[:])
	clear(b.verdicts)
	b.unknown.reset()
}

// instrument is one of the processor's own metrics. metadata.yaml and
// documentation.md describe the same list; TestMetadataMatchesTelemetry
// compares them.
type instrument struct{ name, unit, description string }

const (
	instRequests = iota
	instErrors
	instVerdicts
	instHeld
	instEvictions
	numInstruments
)

var instruments = [numInstruments]instrument{
	instRequests:  {"otelcol_processor_llm_slo_requests", "{span}", "LLM request spans recognized, by producer preset and by where TTFT/E2E came from (origin)."},
	instErrors:    {"otelcol_processor_llm_slo_errors", "{error}", "Values that could not be derived or were repaired, by field and reason (the llm.metrics.error entries)."},
	instVerdicts:  {"otelcol_processor_llm_slo_verdicts", "{verdict}", "SLO verdicts written, by SLO and outcome (met, violated, unknown)."},
	instHeld:      {"otelcol_processor_llm_slo_assembly_held", "{span}", "Request spans held back by the trace assembly until their step spans arrived or the wait passed."},
	instEvictions: {"otelcol_processor_llm_slo_assembly_evictions", "{trace}", "Trace-assembly state dropped to stay within its bounds, by reason."},
}

func newTelemetry(mp metric.MeterProvider, presets, slos []string) (*telemetry, error) {
	m := mp.Meter(metadata.ProcessorScopeName)
	var counters [numInstruments]metric.Int64Counter
	for i, in := range instruments {
		c, err := m.Int64Counter(in.name, metric.WithDescription(in.description), metric.WithUnit(in.unit))
		if err != nil {
			return nil, err
		}
		counters[i] = c
	}
	t := &telemetry{requests: counters[instRequests], errors: counters[instErrors], verdicts: counters[instVerdicts],
		held: counters[instHeld], evictions: counters[instEvictions]}
	for r := range t.evictionAttrs {
		t.evictionAttrs[r] = attrSet("reason", assembly.Reason(r).String())
	}
	for _, p := range presets {
		var row [derive.NumOrigins]metric.AddOption
		for o := range row {
			row[o] = attrSet("preset", p, "origin", derive.Origin(o).String())
		}
		t.requestAttrs = append(t.requestAttrs, row)
	}
	for f := range derive.NumFields {
		for r := range derive.NumReasons {
			t.errorAttrs[f][r] = attrSet("field", f.String(), "reason", r.String())
		}
	}
	for _, s := range slos {
		var row [numOutcomes]metric.AddOption
		for o := range row {
			row[o] = attrSet("slo", s, "outcome", outcomeNames[o])
		}
		t.verdictAttrs = append(t.verdictAttrs, row)
	}
	return t, nil
}

// attrSet builds an attribute set option once, from key/value pairs.
func attrSet(kv ...string) metric.AddOption {
	attrs := make([]attribute.KeyValue, 0, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		attrs = append(attrs, attribute.String(kv[i], kv[i+1]))
	}
	return metric.WithAttributeSet(attribute.NewSet(attrs...))
}

// countRequest counts a written request and its errors.
func (b *batchCounts) countRequest(res *derive.Result) {
	b.requests[res.PresetIndex][res.Origin]++
	if res.Errors.Empty() {
		return // the common case, in one comparison
	}
	for f, r := range &res.Errors {
		if r != derive.NoReason {
			b.errors[f][r]++
		}
	}
}

// countNotJudged counts a span of a call judged on another span (its one
// error, span:<reason>); it is no request of its own.
func (b *batchCounts) countNotJudged(reason derive.Reason) {
	b.errors[derive.FieldSpan][reason]++
}

// countVerdict counts SLO i's verdict on res.
func (b *batchCounts) countVerdict(i int, res *derive.Result, v *slo.Verdict) {
	if !res.Failed {
		b.unknown.count(i, res.PresetIndex, v)
	}
	switch {
	case !v.Decided:
		b.verdicts[i][outcomeUnknown]++
	case v.Met:
		b.verdicts[i][outcomeMet]++
	default:
		b.verdicts[i][outcomeViolated]++
	}
}

func (t *telemetry) newBatch() *batchCounts {
	return &batchCounts{requests: make([][derive.NumOrigins]int64, len(t.requestAttrs)), verdicts: make([][numOutcomes]int64, len(t.verdictAttrs)),
		unknown: newUnknownTally(len(t.verdictAttrs), len(t.requestAttrs))}
}

func (t *telemetry) record(ctx context.Context, b *batchCounts) {
	for p, row := range b.requests {
		for o, n := range row {
			if n > 0 {
				t.requests.Add(ctx, n, t.requestAttrs[p][o])
			}
		}
	}
	for f := range b.errors {
		for r, n := range b.errors[f] {
			if n > 0 {
				t.errors.Add(ctx, n, t.errorAttrs[f][r])
			}
		}
	}
	for s, row := range b.verdicts {
		for o, n := range row {
			if n > 0 {
				t.verdicts.Add(ctx, n, t.verdictAttrs[s][o])
			}
		}
	}
}

// Held counts request spans the trace assembly took into its keeping
// (assembly.Telemetry).
func (t *telemetry) Held(n int) { t.held.Add(context.Background(), int64(n)) }

// Evicted counts what the trace assembly dropped or gave up, by reason
// (assembly.Telemetry).
func (t *telemetry) Evicted(r assembly.Reason, n int) {
	t.evictions.Add(context.Background(), int64(n), t.evictionAttrs[r])
}
