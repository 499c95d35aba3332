// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package series

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmslo/llmslo/internal/aggregate"
)

var t0 = time.Unix(1_700_000_000, 0)

func newTestStore(limit int64) *Store {
	shape := Shape{MaxSize: 160, Sketch: aggregate.NewSketchConfig(0.01), Window: time.Minute}
	st := NewStore(shape, limit, false, "replica-1", func() time.Time { return t0 })
	st.SetLayerKey("llm.layer")
	return st
}

// add finds or creates the series of model (nil past the limit).
func add(st *Store, layer Layer, model string, now time.Time) *Series {
	key := []byte{byte(layer), 1}
	key = append(append(key, model...), 0)
	sh := st.Lock(key)
	defer sh.Unlock()
	s := st.Series(sh, key, layer, []Dim{{"gen_ai.request.model", model}}, 1)
	if s != nil {
		s.Seen(now)
	}
	return s
}

// models are the gen_ai.request.model values of the series Each visits,
// in order, "overflow" for an overflow series.
func models(t *testing.T, st *Store, now time.Time, expiration time.Duration) []string {
	var out []string
	st.Each(now, expiration, func(s *Series) {
		if v, ok := s.dims.Get("gen_ai.request.model"); ok {
			out = append(out, LayerNames[s.layer]+"/"+v.Str())
			return
		}
		_, overflow := s.dims.Get("otel.metric.overflow")
		require.True(t, overflow, "a series without a model is an overflow series")
		out = append(out, LayerNames[s.layer]+"/overflow")
	})
	return out
}

// TestStoreLimit: at a limit of 3, two ordinary series per layer exist; a
// third dimension set goes to the layer's overflow series, which carries
// the layer and the instance id; a span of an existing series still finds
// it.
func TestStoreLimit(t *testing.T) {
	st := newTestStore(3)
	for _, m := range []string{"b", "a"} {
		require.NotNil(t, add(st, LayerClient, m, t0), m)
	}
	assert.Nil(t, add(st, LayerClient, "c", t0), "past the limit")
	assert.NotNil(t, add(st, LayerClient, "a", t0), "an existing series")
	assert.NotNil(t, add(st, LayerServer, "c", t0), "the other layer has its own limit")
	assert.Equal(t, int64(2), st.Live(LayerClient))
	assert.Equal(t, int64(1), st.Live(LayerServer))

	s, n := st.LockOverflow(LayerClient, 1)
	st.UnlockOverflow()
	assert.Equal(t, uint64(1), n)
	assert.Equal(t, map[string]any{"otel.metric.overflow": true, "llm.layer": "client", "collector.instance.id": "replica-1"}, s.dims.AsRaw())
	assert.Equal(t, []string{"server/c", "client/a", "client/b", "client/overflow"}, models(t, st, t0, 0),
		"sorted by key (the layer's byte first: server 0, client 1), the overflow series last")
}

// TestStoreExpiration: Each drops the series idle longer than the
// expiration and gives back their slots; 0 keeps every series.
func TestStoreExpiration(t *testing.T) {
	st := newTestStore(3)
	add(st, LayerClient, "old", t0)
	add(st, LayerClient, "new", t0.Add(time.Minute))
	later := t0.Add(2 * time.Minute)
	assert.Equal(t, []string{"client/new", "client/old"}, models(t, st, later, 0))
	assert.Equal(t, []string{"client/new", "client/old"}, models(t, st, later, 2*time.Minute), "idle for exactly the expiration")
	assert.Equal(t, []string{"client/new"}, models(t, st, later, 90*time.Second))
	assert.Equal(t, int64(1), st.Live(LayerClient))
	require.NotNil(t, add(st, LayerClient, "third", later), "the slot is free again")
}

// TestDeltaStart: a new series' first delta point starts at the previous
// flush; a cumulative series starts at its creation.
func TestDeltaStart(t *testing.T) {
	for _, tc := range []struct {
		delta bool
		want  time.Time
	}{
		{false, t0.Add(time.Minute)},
		{true, t0.Add(30 * time.Second)},
	} {
		now := t0
		st := NewStore(Shape{}, 0, tc.delta, "", func() time.Time { return now })
		st.Each(t0.Add(30*time.Second), 0, func(*Series) {})
		now = t0.Add(time.Minute)
		s := add(st, LayerServer, "m", now)
		assert.Equal(t, tc.want.UnixNano(), int64(s.start), "delta %v", tc.delta)
	}
}

// TestOneSpanCannotSet: the heaviest span stays out of the quantile only
// when floor((n-1)q) + w + 2 <= n.
func TestOneSpanCannotSet(t *testing.T) {
	for _, tc := range []struct {
		n, w uint64
		q    float64
		want bool
	}{
		{12, 1, 0.9, true},    // floor(9.9)=9, 9+1+2 = 12
		{11, 1, 0.9, false},   // floor(9)=9, 12 > 11
		{2, 1, 0.5, false},    // n <= w+1
		{100, 10, 0.9, false}, // floor(89.1)=89, 101 > 100
		{102, 1, 0.99, true},  // floor(99.99)=99, 102
		{101, 1, 0.99, false}, // floor(99)=99, 102 > 101
	} {
		assert.Equal(t, tc.want, OneSpanCannotSet(tc.n, tc.w, tc.q), "n %d w %d q %v", tc.n, tc.w, tc.q)
	}
}
