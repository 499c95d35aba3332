// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package series

import (
	"sync"
	"sync/atomic"

	"github.com/llmslo/llmslo/internal/adjusted"
	"github.com/llmslo/llmslo/internal/catalog"
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
	count    [NumLayers]atomic.Int64
	mu       sync.Mutex
	overflow [NumLayers]*Series // guarded by mu
	rounder  *adjusted.Rounder  // guarded by mu
}

// admit takes a slot for a new series of layer, or reports false at the
// limit.
func (l *limiter) admit(layer Layer) bool {
	n := l.count[layer].Add(1)
	if l.limit > 0 && n > l.limit-1 {
		l.count[layer].Add(-1)
		return false
	}
	return true
}

// release gives back the slot of an expired series.
func (l *limiter) release(layer Layer) { l.count[layer].Add(-1) }

// Live is the number of ordinary series of layer.
func (st *Store) Live(layer Layer) int64 { return st.limits.count[layer].Load() }

// LockOverflow locks the overflow series and returns layer's, creating it
// on first use, with the whole count of adjusted; UnlockOverflow releases
// it.
func (st *Store) LockOverflow(layer Layer, adjusted float64) (*Series, uint64) {
	l := &st.limits
	l.mu.Lock()
	s := l.overflow[layer]
	if s == nil {
		s = st.overflowSeries(layer)
		l.overflow[layer] = s
	}
	return s, l.rounder.Round(adjusted)
}

// UnlockOverflow releases the overflow series.
func (st *Store) UnlockOverflow() { st.limits.mu.Unlock() }

// overflowSeries returns a new overflow series of layer: its attributes
// are otel.metric.overflow=true, the layer (the metric names differ by
// layer) and collector.instance.id (so replicas' overflow series stay
// apart).
func (st *Store) overflowSeries(layer Layer) *Series {
	s := st.newSeries(layer)
	s.dims.PutBool(catalog.AttrOverflow, true)
	st.putCommonDims(s)
	return s
}

// eachOverflow runs fn on every overflow series, under the overflow lock.
func (l *limiter) eachOverflow(fn func(*Series)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.overflow {
		if s != nil {
			fn(s)
		}
	}
}
