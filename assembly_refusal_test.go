// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloprocessor

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pipeline"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/llmslo/llmslo/internal/assembly"
	"github.com/llmslo/llmslo/internal/metadata"
)

var (
	errRetryable = errors.New("503 Service Unavailable")
	errPermanent = consumererror.NewPermanent(errors.New("400 Bad Request"))
)

// scriptedExporter is an exporter without a sending queue behind the
// pipeline's fan-out: it does not mutate data, answers its calls with the
// errors of script in turn (nil: accept), then accepts; it counts the spans
// it accepted by name and span ID.
type scriptedExporter struct {
	mu       sync.Mutex
	script   []error
	readOnly int // calls whose data the fan-out had marked read-only
	got      map[string]int
}

func (*scriptedExporter) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: false}
}

func (e *scriptedExporter) ConsumeTraces(_ context.Context, td ptrace.Traces) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if td.IsReadOnly() {
		e.readOnly++
	}
	if len(e.script) > 0 {
		err := e.script[0]
		e.script = e.script[1:]
		if err != nil {
			return err
		}
	}
	eachSpan(td, func(s ptrace.Span) { e.got[spanKey(s)]++ })
	return nil
}

func spanKey(s ptrace.Span) string { return s.Name() + "/" + s.SpanID().String() }

// refusalRig is the processor with trace assembly in front of the
// collector's own fan-out (the connector router) to the scripted exporter
// and a second read-only consumer (the llm_slo connector's place), on a
// clock the test moves.
type refusalRig struct {
	t    *testing.T
	exp  *scriptedExporter
	impl *llmSLOProcessor
	p    processor.Traces
	tel  *componenttest.Telemetry
	now  time.Time
}

func newRefusalRig(t *testing.T, maxHeld int, script []error) *refusalRig {
	cfg, err := loadConfig(t, "assembly")
	require.NoError(t, err)
	if maxHeld > 0 {
		cfg.TraceAssembly.MaxHeld = maxHeld
	}
	r := &refusalRig{t: t, exp: &scriptedExporter{script: script, got: map[string]int{}},
		tel: componenttest.NewTelemetry(), now: time.Unix(1_767_225_600, 0)}
	t.Cleanup(func() { require.NoError(t, r.tel.Shutdown(context.Background())) })
	fanout := connector.NewTracesRouter(map[pipeline.ID]consumer.Traces{
		pipeline.NewIDWithName(pipeline.SignalTraces, "export"): r.exp,
		pipeline.NewIDWithName(pipeline.SignalTraces, "slo"):    new(consumertest.TracesSink),
	})
	set := processortest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = r.tel.NewTelemetrySettings()
	r.impl, err = newProcessor(set, cfg, fanout)
	require.NoError(t, err)
	r.impl.asm.SetClock(func() time.Time { return r.now })
	r.p, err = newTracesFromImpl(context.Background(), set, cfg, fanout, r.impl)
	require.NoError(t, err)
	return r
}

// tick moves the clock by d and runs the wait timer's release once.
func (r *refusalRig) tick(d time.Duration) {
	r.now = r.now.Add(d)
	_ = r.impl.asm.Tick(context.Background())
	checkCounters(r.t, r.impl.asm)
}

// evictions returns the assembly's give-ups by reason.
func (r *refusalRig) evictions() map[string]int64 {
	out := map[string]int64{}
	m, err := r.tel.GetMetric("otelcol_processor_llm_slo_assembly_evictions")
	if err != nil {
		return out // nothing counted yet
	}
	for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
		v, _ := dp.Attributes.Value(attribute.Key("reason"))
		out[v.AsString()] = dp.Value
	}
	return out
}

// batch builds a batch of SGLang request spans (span IDs 1, 2, ...: each
// waits for 4 decode steps) of trace `trace`, decode steps of it, and
// `other` spans no preset claims.
func batch(trace byte, requests, steps, other int) ptrace.Traces {
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	for i := range requests {
		requestSpan(spans, trace)
		spans.At(spans.Len() - 1).SetSpanID(pcommon.SpanID{trace, byte(i + 1)})
	}
	for i := range steps {
		s := spans.AppendEmpty()
		s.SetName("decode_loop")
		s.SetTraceID(pcommon.TraceID{trace})
		s.SetSpanID(pcommon.SpanID{trace, 0x80, byte(i)})
		s.SetStartTimestamp(t0 + pcommon.Timestamp(i)*1e7)
		s.SetEndTimestamp(t0 + pcommon.Timestamp(i+1)*1e7)
	}
	for i := range other {
		s := spans.AppendEmpty()
		s.SetName("other")
		s.SetTraceID(pcommon.TraceID{trace})
		s.SetSpanID(pcommon.SpanID{trace, 0xf0, byte(i)})
	}
	return td
}

// req, stepKey and other name the spans of batch as the exporter counts them.
func req(trace, i byte) string     { return " Req 1a2b3c4d/" + pcommon.SpanID{trace, i + 1}.String() }
func stepKey(trace, i byte) string { return "decode_loop/" + pcommon.SpanID{trace, 0x80, i}.String() }
func other(trace, i byte) string   { return "other/" + pcommon.SpanID{trace, 0xf0, i}.String() }

// send hands the rig a batch, as the receiver would, and checks the answer.
func (r *refusalRig) send(td ptrace.Traces, want error) {
	err := r.p.ConsumeTraces(context.Background(), td)
	if want == nil {
		require.NoError(r.t, err)
	} else {
		require.ErrorIs(r.t, err, want)
	}
	checkCounters(r.t, r.impl.asm)
}

type rigStep func(*refusalRig)

func send(td ptrace.Traces, want error) rigStep { return func(r *refusalRig) { r.send(td, want) } }
func tick(d time.Duration) rigStep              { return func(r *refusalRig) { r.tick(d) } }

// TestAssemblyReadOnlyRefusal: request spans the assembly holds and sends
// on its own, through the collector's fan-out (which hands read-only data
// to its two consumers) to an exporter with no queue that refuses: sent
// again from the assembly's own copy after a retryable refusal, released
// by the wait timer or inside a request; given up, by reason, after a
// permanent one, a full retry set, or at shutdown; not held at all when the
// batch that carried them is refused. Before the copy, the first retryable
// refusal panicked with "invalid access to shared data".
func TestAssemblyReadOnlyRefusal(t *testing.T) {
	const retry = assembly.MaxRetryBackoff // past any pause
	tests := []struct {
		name    string
		maxHeld int
		script  []error // the exporter's answers, call by call
		steps   []rigStep
		want    map[string]int   // spans the exporter accepted
		given   map[string]int64 // assembly evictions by reason
		wantErr error            // of Shutdown
	}{{
		name:   "timer: retryable twice, then accepted once",
		script: []error{errRetryable, errRetryable},
		steps:  []rigStep{send(batch(1, 2, 0, 0), nil), tick(time.Minute), tick(retry), tick(retry)},
		want:   map[string]int{req(1, 0): 1, req(1, 1): 1},
	}, {
		name:   "timer: retryable, permanent (given up), then a later span accepted",
		script: []error{errRetryable, errPermanent},
		steps: []rigStep{send(batch(1, 2, 0, 0), nil), tick(time.Minute), tick(retry),
			send(batch(2, 1, 0, 0), nil), tick(time.Minute)},
		want:  map[string]int{req(2, 0): 1},
		given: map[string]int64{"refused_downstream": 2},
	}, {
		name: "in a request: retryable, the batch accepted, the retry accepted",
		// Steps that complete the held request release it inside the
		// request that brought them, sent before that request's batch.
		script: []error{errRetryable, nil},
		steps:  []rigStep{send(batch(1, 1, 0, 0), nil), send(batch(1, 0, 4, 0), nil), tick(retry)},
		want: map[string]int{req(1, 0): 1, stepKey(1, 0): 1, stepKey(1, 1): 1,
			stepKey(1, 2): 1, stepKey(1, 3): 1},
	}, {
		name:   "in a request: permanent",
		script: []error{errPermanent, nil},
		steps:  []rigStep{send(batch(1, 1, 0, 0), nil), send(batch(1, 0, 4, 0), nil), tick(retry)},
		want: map[string]int{stepKey(1, 0): 1, stepKey(1, 1): 1,
			stepKey(1, 2): 1, stepKey(1, 3): 1},
		given: map[string]int64{"refused_downstream": 1},
	}, {
		name:    "in a request while the retry set is full",
		maxHeld: 3,
		script:  []error{errRetryable, errRetryable, nil},
		steps: []rigStep{send(batch(1, 2, 0, 0), nil), tick(time.Minute),
			send(batch(2, 2, 0, 0), nil), send(batch(2, 0, 4, 0), nil), tick(retry)},
		want: map[string]int{req(1, 0): 1, req(1, 1): 1, stepKey(2, 0): 1, stepKey(2, 1): 1,
			stepKey(2, 2): 1, stepKey(2, 3): 1},
		given: map[string]int64{"retry_full": 2},
	}, {
		name: "the batch refused, retryable: nothing held until its sender sends it again",
		// The request span is held from the second send only, and
		// delivered once.
		script: []error{errRetryable},
		steps:  []rigStep{send(batch(1, 1, 0, 1), errRetryable), tick(time.Minute), send(batch(1, 1, 0, 1), nil), tick(time.Minute)},
		want:   map[string]int{other(1, 0): 1, req(1, 0): 1},
	}, {
		name:   "the batch refused, permanent: nothing held",
		script: []error{errPermanent},
		steps:  []rigStep{send(batch(1, 1, 0, 1), errPermanent), tick(time.Minute)},
		want:   map[string]int{},
	}, {
		name:    "refused at shutdown",
		script:  []error{errRetryable},
		steps:   []rigStep{send(batch(1, 1, 0, 0), nil)},
		want:    map[string]int{},
		given:   map[string]int64{"refused_at_shutdown": 1},
		wantErr: errRetryable,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRefusalRig(t, tt.maxHeld, tt.script)
			for _, do := range tt.steps {
				do(r)
			}
			err := r.p.Shutdown(context.Background())
			if tt.wantErr == nil {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, tt.wantErr)
			}
			assert.Equal(t, tt.want, r.exp.got)
			given := tt.given
			if given == nil {
				given = map[string]int64{}
			}
			assert.Equal(t, given, r.evictions())
			assert.Empty(t, r.exp.script, "every scripted answer used")
			assert.Positive(t, r.exp.readOnly, "the fan-out handed read-only data")
			assert.Equal(t, 0, r.impl.asm.Stats().Released)
			assert.Zero(t, r.impl.asm.Stats().Awaiting)
		})
	}
}
