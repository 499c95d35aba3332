// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package series

import (
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/llmslo/llmslo/internal/metadata"
)

// Def is a metric's name, unit and description.
type Def struct{ Name, Unit, Desc string }

// builder assembles one flush's pmetric.Metrics: one ResourceMetrics per
// distinct set of resource dimensions, one Metric per name within it.
type builder struct {
	md        pmetric.Metrics
	resources map[string]*resourceBuilder
	delta     bool
}

type resourceBuilder struct {
	sm      pmetric.ScopeMetrics
	metrics map[string]pmetric.Metric
}

func newBuilder(delta bool) *builder {
	return &builder{md: pmetric.NewMetrics(), resources: map[string]*resourceBuilder{}, delta: delta}
}

// metric returns the metric def of s's resource, adding it on first use.
func (b *builder) metric(s *Series, def *Def) pmetric.Metric {
	rb := b.resources[s.resKey]
	if rb == nil {
		rm := b.md.ResourceMetrics().AppendEmpty()
		s.resource.CopyTo(rm.Resource().Attributes())
		sm := rm.ScopeMetrics().AppendEmpty()
		sm.Scope().SetName(metadata.ConnectorScopeName)
		rb = &resourceBuilder{sm: sm, metrics: map[string]pmetric.Metric{}}
		b.resources[s.resKey] = rb
	}
	m, ok := rb.metrics[def.Name]
	if !ok {
		m = rb.sm.Metrics().AppendEmpty()
		m.SetName(def.Name)
		m.SetUnit(def.Unit)
		m.SetDescription(def.Desc)
		rb.metrics[def.Name] = m
	}
	return m
}

func (b *builder) temporality() pmetric.AggregationTemporality {
	if b.delta {
		return pmetric.AggregationTemporalityDelta
	}
	return pmetric.AggregationTemporalityCumulative
}

// sum returns the points of a monotonic sum.
func (b *builder) sum(s *Series, def *Def) pmetric.NumberDataPointSlice {
	m := b.metric(s, def)
	if m.Type() != pmetric.MetricTypeSum {
		sum := m.SetEmptySum()
		sum.SetIsMonotonic(true)
		sum.SetAggregationTemporality(b.temporality())
	}
	return m.Sum().DataPoints()
}

// gauge returns the points of a gauge.
func (b *builder) gauge(s *Series, def *Def) pmetric.NumberDataPointSlice {
	m := b.metric(s, def)
	if m.Type() != pmetric.MetricTypeGauge {
		m.SetEmptyGauge()
	}
	return m.Gauge().DataPoints()
}
