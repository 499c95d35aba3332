// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package series

import (
	"hash/maphash"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/llmslo/llmslo/internal/adjusted"
	"github.com/llmslo/llmslo/internal/catalog"
)

// numShards splits the series so that concurrent batches rarely contend on
// one lock; the flush visits the shards one at a time.
const numShards = 16

// Store holds the live series.
//
// Concurrency: series live in numShards maps, each behind its own mutex,
// chosen by a hash of the series key; a span locks one shard, never a
// global lock, so concurrent batches contend only when their spans hash to
// the same shard. Each locks the shards one at a time. The overflow series
// have their own mutex (limiter).
//
// Memory: a span whose series exists allocates nothing (the key is looked
// up with m[string(buf)]); the dimension values are copied when a series
// is created.
type Store struct {
	shape    Shape
	delta    bool
	instance string // collector.instance.id; "": not written
	// layerKey is the llm.layer attribute's key; set before any span.
	layerKey string
	now      func() time.Time
	seed     maphash.Seed

	shards [numShards]Shard
	limits limiter
	// lastFlush is the time of the previous flush (unix ns): the start of
	// a new series' first delta point.
	lastFlush atomic.Int64
	live      []liveEntry // Each's scratch; Each runs one at a time
}

// Shard is one lock's share of the series.
type Shard struct {
	mu     sync.Mutex
	series map[string]*Series
	// rounder turns adjusted counts into whole counts; guarded by mu.
	rounder *adjusted.Rounder
}

// NewStore returns an empty store. limit is the cardinality limit per
// layer (0: none); delta, the temporality; instance, the
// collector.instance.id to write ("": none); now, the clock.
func NewStore(shape Shape, limit int64, delta bool, instance string, now func() time.Time) *Store {
	st := &Store{shape: shape, delta: delta, instance: instance, now: now, seed: maphash.MakeSeed()}
	st.limits.limit = limit
	// Fixed seeds: the rounding is unbiased whatever the seed, and a run
	// is reproducible.
	for i := range st.shards {
		st.shards[i].series = map[string]*Series{}
		st.shards[i].rounder = adjusted.NewRounder(uint64(i) + 1)
	}
	st.limits.rounder = adjusted.NewRounder(numShards + 1)
	st.lastFlush.Store(now().UnixNano())
	return st
}

// SetLayerKey sets the llm.layer attribute's key of the series created
// from now on; it runs before any span.
func (st *Store) SetLayerKey(key string) { st.layerKey = key }

// Lock locks and returns the shard of key.
func (st *Store) Lock(key []byte) *Shard {
	sh := &st.shards[maphash.Bytes(st.seed, key)%numShards]
	sh.mu.Lock()
	return sh
}

// Series returns the series of key, creating it from dims (dims[resStart:]
// are resource dimensions) when the cardinality limit admits it; nil past
// the limit. The caller holds the shard's lock.
func (st *Store) Series(sh *Shard, key []byte, layer Layer, dims []Dim, resStart int) *Series {
	s := sh.series[string(key)]
	if s == nil && st.limits.admit(layer) {
		s = st.newSeries(layer)
		s.setDims(dims, resStart)
		st.putCommonDims(s)
		sh.series[string(key)] = s
	}
	return s
}

// Round turns an adjusted count into a whole count; the caller holds the
// shard's lock.
func (sh *Shard) Round(adjusted float64) uint64 { return sh.rounder.Round(adjusted) }

// Unlock releases the shard.
func (sh *Shard) Unlock() { sh.mu.Unlock() }

func (st *Store) newSeries(layer Layer) *Series {
	return newSeries(&st.shape, layer, st.seriesStart())
}

// putCommonDims adds the layer and the instance id.
func (st *Store) putCommonDims(s *Series) {
	s.dims.PutStr(st.layerKey, LayerNames[s.layer])
	if st.instance != "" {
		s.dims.PutStr(catalog.AttrCollectorInstance, st.instance)
	}
}

// seriesStart is the start timestamp of a new series: its creation for
// cumulative temporality (stable for the series' life), the previous flush
// for delta, so successive delta points tile time.
func (st *Store) seriesStart() pcommon.Timestamp {
	if st.delta {
		return pcommon.Timestamp(st.lastFlush.Load())
	}
	return pcommon.NewTimestampFromTime(st.now())
}

// liveEntry is a series to emit, with its key and shard.
type liveEntry struct {
	key string
	s   *Series
	sh  *Shard
}

// Each drops the series idle longer than expiration (0: never), then runs
// fn on the others sorted by key, each under its shard's lock, then on the
// overflow series; now becomes the start of the next delta interval. Map
// order and the shards' random hash seed would otherwise order the output
// differently on every run. Only Each removes series and the caller runs
// one at a time, so every entry is still live when fn sees it.
func (st *Store) Each(now time.Time, expiration time.Duration, fn func(*Series)) {
	defer st.lastFlush.Store(now.UnixNano())
	live := st.liveSeries(now, expiration)
	for i := range live {
		e := &live[i]
		e.sh.mu.Lock()
		fn(e.s)
		e.sh.mu.Unlock()
	}
	clear(live) // drop the references until the next flush
	st.live = live[:0]
	st.limits.eachOverflow(fn)
}

// liveSeries drops the expired series and returns the others sorted by key.
func (st *Store) liveSeries(now time.Time, expiration time.Duration) []liveEntry {
	live := st.live[:0]
	for i := range st.shards {
		sh := &st.shards[i]
		sh.mu.Lock()
		for key, s := range sh.series {
			if expiration > 0 && now.Sub(s.lastSeen) > expiration {
				delete(sh.series, key)
				st.limits.release(s.layer)
				continue
			}
			live = append(live, liveEntry{key, s, sh})
		}
		sh.mu.Unlock()
	}
	slices.SortFunc(live, func(a, b liveEntry) int { return strings.Compare(a.key, b.key) })
	return live
}

// Footprint adds up the bytes the series' window sketches and histograms
// hold, and returns one series (nil: none) to look into.
func (st *Store) Footprint() (sketches, hists int, one *Series) {
	for i := range st.shards {
		sh := &st.shards[i]
		sh.mu.Lock()
		for _, s := range sh.series {
			sk, h := s.footprint()
			sketches, hists = sketches+sk, hists+h
			if one == nil {
				one = s
			}
		}
		sh.mu.Unlock()
	}
	return sketches, hists, one
}
