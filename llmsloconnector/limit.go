// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmslo/llmslo/internal/adjusted"
)

// limiter is the cardinality policy, OpenTelemetry Go's rule for
// aggregation_cardinality_limit: at most limit series per layer, the
// overflow series included, so at most limit-1 ordinary series exist; past
// that, a new dimension set's spans go to the layer's overflow series, whose
// only dimensions are otel.metric.overflow=true, the layer and the instance
// id. Every request is still counted, in the overflow series.
//
// The ordinary count is an atomic per layer, taken by the shard that
// creates a series and given back when a series expires, so admission needs
// no global lock. The overflow series have their own mutex, taken only past
// the limit.
//
// Every metric stream belongs to a dimension set the limiter admitted (or
// to the overflow series); within one, SLO names come from the processors'
// configuration and constraint names from a closed vocabulary, so no span
// can add a stream outside the limit.
type limiter struct {
	limit    int64 // 0: no limit
	count    [numLayers]atomic.Int64
	mu       sync.Mutex
	overflow [numLayers]*series // guarded by mu
	rounder  *adjusted.Rounder  // guarded by mu
}

// admit takes a slot for a new series of layer, or reports false at the
// limit.
func (l *limiter) admit(layer layerIndex) bool {
	n := l.count[layer].Add(1)
	if l.limit > 0 && n > l.limit-1 {
		l.count[layer].Add(-1)
		return false
	}
	return true
}

// release gives back the slot of an expired series.
func (l *limiter) release(layer layerIndex) { l.count[layer].Add(-1) }

// live is the number of ordinary series of layer.
func (l *limiter) live(layer layerIndex) int64 { return l.count[layer].Load() }

// recordOverflow adds o to its layer's overflow series, creating it on
// first use.
func (c *llmSLOConnector) recordOverflow(o *observation, now time.Time) {
	l := &c.limits
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.overflow[o.layer]
	if s == nil {
		s = c.overflowSeries(o.layer)
		l.overflow[o.layer] = s
	}
	c.record(s, o, now, l.rounder.Round(o.adjusted))
}

// overflowSeries returns a new overflow series of layer: its attributes
// are otel.metric.overflow=true, the layer (the metric names differ by
// layer) and collector.instance.id (so replicas' overflow series stay
// apart).
func (c *llmSLOConnector) overflowSeries(layer layerIndex) *series {
	s := c.emptySeries(layer)
	s.dims.PutBool(attrOverflow, true)
	c.putCommonDims(s)
	return s
}

// eachOverflow runs fn on every overflow series, under the overflow lock.
func (l *limiter) eachOverflow(fn func(*series)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.overflow {
		if s != nil {
			fn(s)
		}
	}
}
