// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

func TestParseRamp(t *testing.T) {
	for _, c := range []struct {
		in   string
		want *Ramp
	}{
		{"5:60", &Ramp{From: 5, To: 60}},
		{" 0.5 : 2 ", &Ramp{From: 0.5, To: 2}},
		{"60:5", &Ramp{From: 60, To: 5}},
		{"5", nil}, {"0:60", nil}, {"5:-1", nil}, {"a:b", nil}, {"5:Inf", nil},
	} {
		got, err := ParseRamp(c.in)
		if c.want == nil {
			assert.Error(t, err, c.in)
			continue
		}
		require.NoError(t, err, c.in)
		assert.Equal(t, c.want, got, c.in)
	}
}

// TestRampAt: the arrival time inverts the ramp's cumulative rate,
// from*t + (to-from)*t^2/(2d), rising, flat and falling.
func TestRampAt(t *testing.T) {
	d := 60 * time.Second
	for _, r := range []Ramp{{5, 60}, {20, 20}, {60, 5}} {
		for _, tt := range []float64{0, 1, 17.5, 30, 59.9} {
			work := r.From*tt + (r.To-r.From)*tt*tt/(2*d.Seconds())
			assert.InDelta(t, tt, r.at(work, d), 1e-9, "%v at %v s", r, tt)
		}
	}
	assert.True(t, math.IsInf((&Ramp{60, 5}).at(1e6, d), 1), "past a falling ramp's total")
}

// TestRampInFlight: a ramp from 2 to 40 requests per second over 30 s on
// two replicas per model sends about (2+40)/2*30 requests, three times as
// many in the second half as in the first; every engine span's truth names
// its replica as its resource does, and its in-flight count is the count of
// the replica's engine spans with start <= its start < end, counted here
// from the exported spans.
func TestRampInFlight(t *testing.T) {
	exp := keepSpans{tracetest.NewInMemoryExporter()}
	cfg := Config{Seed: 7, Fast: true, Count: 1 << 20, Duration: 30 * time.Second, Ramp: &Ramp{From: 2, To: 40}, Replicas: 2,
		ModelAttr: true, Models: map[string]float64{DefaultModel: 1, "llama-3.1-70b-instruct": 1},
		Shapes: map[Shape]float64{ShapeVLLM: 2, ShapeTRTLLM: 1, ShapeChunks: 1}, Exporter: exp}
	truths, err := Run(context.Background(), cfg)
	require.NoError(t, err)
	assert.InDelta(t, 630, len(truths), 4*math.Sqrt(630))
	spans := exp.GetSpans()
	require.Len(t, spans, len(truths))
	type span struct {
		replica    string
		start, end int64
	}
	byID := map[string]span{}
	var engine []span
	var first, second int
	t0 := spans[0].StartTime
	for _, s := range spans {
		if s.StartTime.Before(t0) {
			t0 = s.StartTime
		}
	}
	for _, s := range spans {
		if s.StartTime.Sub(t0) < 15*time.Second {
			first++
		} else {
			second++
		}
		replica, _ := s.Resource.Set().Value("service.instance.id")
		sp := span{replica.AsString(), s.StartTime.UnixNano(), s.EndTime.UnixNano()}
		byID[s.SpanContext.SpanID().String()] = sp
		if sp.replica != "" {
			engine = append(engine, sp)
		}
	}
	assert.InDelta(t, 3, float64(second)/float64(first), 0.5, "the ramp")
	replicas := map[string]bool{}
	maxInFlight := 0
	for _, tr := range truths {
		sp := byID[tr.SpanID]
		assert.Equal(t, tr.Replica, sp.replica, "%s: replica", tr.Shape)
		if tr.Layer != "server" {
			assert.Zero(t, tr.InFlight)
			continue
		}
		replicas[tr.Replica] = true
		want := 0
		for _, o := range engine {
			if o.replica == sp.replica && o.start <= sp.start && sp.start < o.end {
				want++
			}
		}
		assert.Equal(t, want, tr.InFlight, "%s on %s", tr.SpanID, tr.Replica)
		maxInFlight = max(maxInFlight, want)
	}
	assert.Len(t, replicas, 4, "two replicas of two models")
	assert.Greater(t, maxInFlight, 16, "the 70B's 16 slots overflow")
}

// keepSpans is an in-memory exporter that keeps its spans past the
// providers' shutdown.
type keepSpans struct{ *tracetest.InMemoryExporter }

func (keepSpans) Shutdown(context.Context) error { return nil }
