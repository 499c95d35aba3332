// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package exemplar

import (
	"math/rand/v2"
	"slices"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

func ex(v float64, id byte) Exemplar {
	return Exemplar{Value: v, TraceID: pcommon.TraceID{id}, SpanID: pcommon.SpanID{id}, Time: pcommon.Timestamp(id)}
}

func TestSlowestKeepsTheLargest(t *testing.T) {
	tests := []struct {
		name   string
		max    int
		values []float64
		want   []float64 // slowest first
	}{
		{"zero keeps none", 0, []float64{1, 2}, nil},
		{"fewer than max", 3, []float64{0.2, 0.1}, []float64{0.2, 0.1}},
		{"outliers win", 2, []float64{0.1, 5, 0.2, 0.3, 4, 0.05}, []float64{5, 4}},
		{"ties keep the first", 1, []float64{2, 2, 1}, []float64{2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewSlowest(tt.max)
			for i, v := range tt.values {
				s.Offer(ex(v, byte(i+1)))
			}
			es := pmetric.NewExemplarSlice()
			s.AppendTo(es)
			var got []float64
			for i := range es.Len() {
				got = append(got, es.At(i).DoubleValue())
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("kept %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSlowestCarriesIDsAndResets(t *testing.T) {
	s := NewSlowest(2)
	s.Offer(ex(1, 1))
	s.Offer(ex(3, 3))
	s.Offer(ex(2, 2))
	es := pmetric.NewExemplarSlice()
	s.AppendTo(es)
	if es.Len() != 2 || es.At(0).TraceID() != (pcommon.TraceID{3}) || es.At(1).SpanID() != (pcommon.SpanID{2}) || es.At(0).Timestamp() != 3 {
		t.Fatalf("exemplars: %d, first trace %v", es.Len(), es.At(0).TraceID())
	}
	s.Reset()
	if s.Len() != 0 {
		t.Fatalf("after Reset: %d kept", s.Len())
	}
}

// TestSlowestMatchesSort checks the heap against a full sort on random input.
func TestSlowestMatchesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		k := 1 + rng.IntN(8)
		n := rng.IntN(100)
		s := NewSlowest(k)
		all := make([]float64, n)
		for i := range all {
			all[i] = rng.ExpFloat64()
			s.Offer(Exemplar{Value: all[i]})
		}
		slices.Sort(all)
		slices.Reverse(all)
		want := all[:min(k, n)]
		es := pmetric.NewExemplarSlice()
		s.AppendTo(es)
		for i := range want {
			if es.At(i).DoubleValue() != want[i] {
				t.Fatalf("round %d: exemplar %d = %v, want %v", round, i, es.At(i).DoubleValue(), want[i])
			}
		}
	}
}

func TestOfferBelowTheSmallestDoesNotAllocate(t *testing.T) {
	s := NewSlowest(4)
	for i := range 4 {
		s.Offer(ex(float64(10+i), byte(i)))
	}
	if n := testing.AllocsPerRun(100, func() { s.Offer(ex(1, 9)) }); n != 0 {
		t.Fatalf("allocs = %v", n)
	}
}
