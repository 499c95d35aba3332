// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package series

import (
	"strconv"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/llmslo/llmslo/internal/aggregate"
	"github.com/llmslo/llmslo/internal/catalog"
	"github.com/llmslo/llmslo/internal/contract"
)

// Names are the metrics a flush writes, one convention version's.
type Names struct {
	Hist [NumHists][NumLayers]Def
	// TokenType is each histogram's gen_ai.token.type; "": none written.
	TokenType [NumHists]string
	// Usage are the token counters, written once they have seen a value.
	Usage [NumUsage][NumLayers]Def
	// The SLO counters and gauges, all with llm.slo.name.
	Requests, Met, Violated, Unknown, TokensMet, Weighted, WeightedSpans, Violations, Goodput, Pressure Def
	Window                                                                                              [NumWindows]Def
}

// Output is what a flush writes besides the series: it is fixed at
// creation, apart from the scratch Merged, which one flush at a time uses.
type Output struct {
	Names       *Names
	Delta       bool
	Percentiles []float64
	// PressureQuantile and PressureMinRequests configure the pressure
	// gauge (pressure.quantile, pressure.min_requests).
	PressureQuantile    float64
	PressureMinRequests int
	Merged              *aggregate.Sketch
}

// Thresholds are one SLO's thresholds in seconds, by Window (0: none).
type Thresholds [NumWindows]float64

// Points writes one flush's points.
type Points struct {
	out *Output
	b   *builder
	// sloName is the name of the SLO of an index; false: none.
	sloName func(int) (string, bool)
	// pressure are the pressure SLOs' thresholds by name; nil: off.
	pressure map[string]*Thresholds
	ts       pcommon.Timestamp
	now      time.Time
}

// NewPoints starts the points of a flush at now.
func NewPoints(out *Output, sloName func(int) (string, bool), pressure map[string]*Thresholds, now time.Time) *Points {
	return &Points{out: out, b: newBuilder(out.Delta), sloName: sloName, pressure: pressure,
		ts: pcommon.NewTimestampFromTime(now), now: now}
}

// Metrics are the points written.
func (p *Points) Metrics() pmetric.Metrics { return p.b.md }

// Emit writes one series' points, then resets it for delta temporality.
// The caller holds the series' lock.
func (p *Points) Emit(s *Series) {
	p.histograms(s)
	p.usage(s)
	p.slos(s)
	p.windows(s)
	if p.b.delta {
		s.start = p.ts
	}
}

// stamp stamps a number point with the series' attributes and times.
func (p *Points) stamp(s *Series, dp pmetric.NumberDataPoint) pmetric.NumberDataPoint {
	s.dims.CopyTo(dp.Attributes())
	dp.SetStartTimestamp(s.start)
	dp.SetTimestamp(p.ts)
	return dp
}

func (p *Points) histograms(s *Series) {
	b := p.b
	for k := range NumHists {
		h := s.hists[k]
		if h == nil || b.delta && h.Count() == 0 {
			continue
		}
		m := b.metric(s, &p.out.Names.Hist[k][s.layer])
		dp := h.AppendTo(m)
		if m.Type() == pmetric.MetricTypeExponentialHistogram {
			m.ExponentialHistogram().SetAggregationTemporality(b.temporality())
		} else {
			m.Histogram().SetAggregationTemporality(b.temporality())
		}
		s.dims.CopyTo(dp.Attributes())
		if tt := p.out.Names.TokenType[k]; tt != "" {
			dp.Attributes().PutStr(catalog.AttrTokenType, tt)
		}
		dp.SetStartTimestamp(s.start)
		dp.SetTimestamp(p.ts)
		if s.exemplars != nil {
			s.exemplars.hists[k].AppendTo(dp.Exemplars())
			s.exemplars.hists[k].Reset()
		}
		if b.delta {
			h.Reset()
		}
	}
}

// usage writes s's token counters.
func (p *Points) usage(s *Series) {
	if s.usage == nil {
		return
	}
	for k := range NumUsage {
		if s.usage.seen&(1<<k) != 0 {
			p.count(s, &p.out.Names.Usage[k][s.layer], &s.usage.n[k])
		}
	}
}

func (p *Points) slos(s *Series) {
	n := p.out.Names
	for i, sc := range s.slos {
		name, ok := p.sloName(i)
		if sc == nil || !ok {
			continue
		}
		for _, x := range [...]struct {
			def *Def
			v   *uint64
		}{
			{&n.Requests, &sc.selected},
			{&n.Met, &sc.met},
			{&n.Violated, &sc.violated},
			{&n.Unknown, &sc.unknown},
			{&n.TokensMet, &sc.tokensMet},
			{&n.Weighted, &sc.weighted},
			{&n.WeightedSpans, &sc.weightedSpans},
		} {
			dp, ok := p.count(s, x.def, x.v, catalog.AttrSLOName, name)
			if ok && x.def == &n.Violated && s.exemplars != nil && i < len(s.exemplars.violated) {
				s.exemplars.violated[i].AppendTo(dp.Exemplars())
				s.exemplars.violated[i].Reset()
			}
		}
		p.violations(s, sc, name)
		if r, ok := sc.goodput.Value(p.now); ok {
			dp := p.stamp(s, p.b.gauge(s, &n.Goodput).AppendEmpty())
			dp.Attributes().PutStr(catalog.AttrSLOName, name)
			dp.SetDoubleValue(r)
		}
	}
}

// count writes one counter point with the given attributes (name, value
// pairs) and, for delta temporality, resets the count; an empty delta is
// not written (false).
func (p *Points) count(s *Series, def *Def, v *uint64, attrs ...string) (pmetric.NumberDataPoint, bool) {
	if p.b.delta && *v == 0 {
		return pmetric.NumberDataPoint{}, false
	}
	dp := p.stamp(s, p.b.sum(s, def).AppendEmpty())
	for i := 0; i+1 < len(attrs); i += 2 {
		dp.Attributes().PutStr(attrs[i], attrs[i+1])
	}
	dp.SetIntValue(int64(*v))
	if p.b.delta {
		*v = 0
	}
	return dp, true
}

// violations writes the SLO's llm.slo.violations points: per violation
// name the count without a cause, then for a constraint its count by
// cause (llm.slo.cause).
func (p *Points) violations(s *Series, sc *sloCounts, name string) {
	def := &p.out.Names.Violations
	for v, constraint := range violationNames {
		if sc.violations[v] > 0 {
			p.count(s, def, &sc.violations[v], catalog.AttrSLOName, name, catalog.AttrSLOConstraint, constraint)
		}
		k := v - firstConstraint
		if k < 0 || k >= contract.NumConstraints {
			continue
		}
		for c := range contract.NumCauses {
			if sc.causes[k][c] > 0 {
				p.count(s, def, &sc.causes[k][c], catalog.AttrSLOName, name, catalog.AttrSLOConstraint, constraint, catalog.AttrSLOCause, c.String())
			}
		}
	}
}

func (p *Points) windows(s *Series) {
	for w := range NumWindows {
		win := s.windows[w]
		if win == nil {
			continue
		}
		sk := win.MergeInto(p.out.Merged, p.now)
		if sk.Count() == 0 {
			continue
		}
		for _, q := range p.out.Percentiles {
			dp := p.stamp(s, p.b.gauge(s, &p.out.Names.Window[w]).AppendEmpty())
			dp.Attributes().PutStr(catalog.AttrQuantile, strconv.FormatFloat(q/100, 'f', -1, 64))
			dp.SetDoubleValue(sk.Quantile(q / 100))
		}
		p.pressureOf(s, w, sk, win.Heaviest(p.now))
	}
}
