// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/llmslo/llmslo/internal/contract"
	"github.com/llmslo/llmslo/tools/internal/report/schema"
)

// Capacity: goodput by the load each server-layer request met on its
// replica (docs/report.md, "Capacity"), the knee where it stops holding the
// SLO's objective, and the replicas the group's peak needs.

// DefaultCapacityBy are the resource attributes that name a replica, the
// first present wins: OpenTelemetry's instance ID, then Kubernetes' pod,
// then the host.
var DefaultCapacityBy = []string{"service.instance.id", "k8s.pod.name", "host.name"}

// DefaultCapacityMinRequests is the fewest requests a load level holds
// before it is merged with the next: below it, a level's Wilson interval
// is too wide to say anything.
const DefaultCapacityMinRequests = 20

// maxCapacityBy bounds Options.CapacityBy: a replica's key is one byte.
const maxCapacityBy = 16

// maxReplicas bounds the replicas told apart: the requests of replicas
// past it are left out of the capacity (and counted), so an attribute of
// unbounded values costs bounded memory.
const maxReplicas = 10_000

// replicaName is a resource's replica: the value of its first CapacityBy
// attribute present, and that attribute's index (-1: none).
type replicaName struct {
	value string
	key   int
}

// replicaOf reads a resource's replica.
func (e *Engine) replicaOf(res pcommon.Map) replicaName {
	for i, k := range e.opts.CapacityBy {
		if v, ok := res.Get(k); ok {
			if s := v.AsString(); s != "" {
				return replicaName{value: s, key: i}
			}
		}
	}
	return replicaName{key: -1}
}

// replicas interns the replicas of the requests applied (apply's, under
// mu). A request's record holds its replica's index + 1, 0 for none.
type replicas struct {
	ix map[string]uint32
	// keyOf is each replica's CapacityBy index.
	keyOf []uint8
	// last caches the previous request's replica: consecutive requests
	// mostly share a resource, so the map is seldom read.
	last    replicaName
	lastID  uint32
	scratch []byte
	// unplaced counts the server-layer requests left out.
	unplaced int64
}

// place returns the record's replica field for a request read with
// replica rn on layer; server-layer requests without one are counted.
func (rs *replicas) place(rn replicaName, layer string, start int64) uint32 {
	if layer != contract.LayerServer {
		return 0
	}
	if rn.key < 0 || start <= 0 {
		rs.unplaced++
		return 0
	}
	if rs.lastID != 0 && rn == rs.last {
		return rs.lastID
	}
	b := append(rs.scratch[:0], byte(rn.key))
	b = append(b, rn.value...)
	rs.scratch = b
	id, ok := rs.ix[string(b)]
	if !ok {
		if len(rs.keyOf) >= maxReplicas {
			rs.unplaced++
			return 0
		}
		if rs.ix == nil {
			rs.ix = map[string]uint32{}
		}
		rs.keyOf = append(rs.keyOf, uint8(rn.key))
		id = uint32(len(rs.keyOf))
		rs.ix[string(b)] = id
	}
	rs.last, rs.lastID = rn, id
	return id
}

// placed is one server-layer request on a known replica: its record, its
// replica's index and its group.
type placed struct{ idx, rep, grp uint32 }

// flightEvent is a placed request's start or end, in ns.
type flightEvent struct {
	t int64
	k uint32 // index in the placed requests
}

// loadSweep is what the sweep over the placed requests' starts and ends
// finds: each one's load on arrival, and per group the total in flight.
type loadSweep struct {
	placed []placed
	level  []uint32 // per placed request
	// Per group: the peak of its requests in flight at once across its
	// replicas, the P99 of that total over the report's duration, the
	// replicas that served it and the CapacityBy keys that named them.
	peak, p99, replicas []int64
	keys                []uint64
}

// sweepLoad places every server-layer request on a known replica and
// sweeps their starts and ends in time order: O(n log n) for the sorts,
// memory linear in the placed requests.
func (e *Engine) sweepLoad() *loadSweep {
	ng := len(e.groups)
	s := &loadSweep{peak: make([]int64, ng), p99: make([]int64, ng), replicas: make([]int64, ng), keys: make([]uint64, ng)}
	n := 0
	for _, rec := range e.recs.all() {
		if rec.replica != 0 {
			n++
		}
	}
	s.placed = make([]placed, 0, n)
	starts, ends := make([]flightEvent, 0, n), make([]flightEvent, 0, n)
	seen := map[uint64]struct{}{}
	var prev uint64 = math.MaxUint64
	for idx, rec := range e.recs.all() {
		if rec.replica == 0 {
			continue
		}
		k := uint32(len(s.placed))
		p := placed{idx: uint32(idx), rep: rec.replica - 1, grp: rec.group}
		s.placed = append(s.placed, p)
		// A span of no duration is in flight for its first nanosecond.
		starts = append(starts, flightEvent{rec.start, k})
		ends = append(ends, flightEvent{rec.start + max(rec.dur, 1), k})
		if pair := uint64(p.grp)<<32 | uint64(p.rep); pair != prev {
			prev = pair
			if _, ok := seen[pair]; !ok {
				seen[pair] = struct{}{}
				s.replicas[p.grp]++
				s.keys[p.grp] |= 1 << e.replicas.keyOf[p.rep]
			}
		}
	}
	byTime := func(a, b flightEvent) int { return cmp.Compare(a.t, b.t) }
	slices.SortFunc(starts, byTime)
	slices.SortFunc(ends, byTime)
	s.level = make([]uint32, len(s.placed))
	s.count(starts, ends, e.minStart, max(e.maxEnd, lastTime(ends)), len(e.replicas.keyOf))
	return s
}

func lastTime(evs []flightEvent) int64 {
	if len(evs) == 0 {
		return math.MinInt64
	}
	return evs[len(evs)-1].t
}

// count walks the sorted starts and ends: at each start time t the ends at
// or before t leave first (a request ending at t is no longer in flight),
// then every request starting at t enters, and each of them reads its
// replica's count, itself included. Each group's total is integrated over
// [from, to] for its P99.
func (s *loadSweep) count(starts, ends []flightEvent, from, to int64, nrep int) {
	ng := len(s.peak)
	perRep := make([]uint32, nrep)
	total := make([]int64, ng)
	since := make([]int64, ng)
	hist := make([][]int64, ng) // ns spent at each total
	for g := range since {
		since[g] = from
	}
	step := func(ev flightEvent, d int64) {
		p := s.placed[ev.k]
		perRep[p.rep] = uint32(int64(perRep[p.rep]) + d)
		g := p.grp
		for int64(len(hist[g])) <= total[g] {
			hist[g] = append(hist[g], 0)
		}
		hist[g][total[g]] += ev.t - since[g]
		since[g] = ev.t
		total[g] += d
		s.peak[g] = max(s.peak[g], total[g])
	}
	j := 0
	for i := 0; i < len(starts); {
		t := starts[i].t
		for ; j < len(ends) && ends[j].t <= t; j++ {
			step(ends[j], -1)
		}
		n := i
		for ; n < len(starts) && starts[n].t == t; n++ {
			step(starts[n], 1)
		}
		for ; i < n; i++ {
			s.level[starts[i].k] = perRep[s.placed[starts[i].k].rep]
		}
	}
	for ; j < len(ends); j++ {
		step(ends[j], -1)
	}
	for g := range hist {
		if len(hist[g]) == 0 {
			continue
		}
		hist[g][0] += to - since[g]
		s.p99[g] = timePercentile(hist[g], 0.99, to-from)
	}
}

// timePercentile is the least total the time spent at or under reaches q
// of the period's length.
func timePercentile(hist []int64, q float64, period int64) int64 {
	var cum int64
	for c, ns := range hist {
		cum += ns
		if float64(cum) >= q*float64(period) {
			return int64(c)
		}
	}
	return int64(len(hist) - 1)
}

// capacity is every SLO's capacity, per group in report order.
func (e *Engine) capacity(order []uint32) []schema.Capacity {
	out := []schema.Capacity{}
	if !slices.ContainsFunc(e.slos, func(d sloDef) bool { return d.objective > 0 }) {
		return out
	}
	s := e.sweepLoad()
	// The placed requests by group, then load: counting sorts, by load
	// then stably by group, linear in the requests.
	all := make([]uint32, len(s.placed))
	for k := range all {
		all[k] = uint32(k)
	}
	maxLevel := uint32(0)
	for _, l := range s.level {
		maxLevel = max(maxLevel, l)
	}
	byLevel, _ := countingSort(all, int(maxLevel)+1, func(k uint32) int { return int(s.level[k]) })
	// group g's are byLoad[from[g]:from[g+1]]
	byLoad, from := countingSort(byLevel, len(e.groups), func(k uint32) int { return int(s.placed[k].grp) })
	for i, def := range e.slos {
		if def.objective <= 0 {
			continue
		}
		for _, g := range order {
			levels := e.loadLevels(i, s, byLoad[from[g]:from[g+1]])
			if len(levels) == 0 {
				continue
			}
			c := schema.Capacity{SLO: def.name, Group: e.groups[g], ReplicaKey: e.replicaKey(s.keys[g]),
				Levels: mergeLevels(levels, e.opts.CapacityMinRequests), PeakInFlight: s.peak[g], P99InFlight: s.p99[g],
				ReplicasObserved: s.replicas[g]}
			c.Knee, c.KneeInFlight = knee(c.Levels, def.objective)
			if c.KneeInFlight != nil {
				c.ReplicasNeeded = ceilDiv(c.PeakInFlight, *c.KneeInFlight)
				c.ReplicasNeededP99 = ceilDiv(c.P99InFlight, *c.KneeInFlight)
			}
			out = append(out, c)
		}
	}
	return out
}

// countingSort orders ks stably by key, each in [0, buckets), and returns
// where each key's run starts (buckets+1 offsets).
func countingSort(ks []uint32, buckets int, key func(uint32) int) ([]uint32, []int) {
	from := make([]int, buckets+1)
	for _, k := range ks {
		from[key(k)+1]++
	}
	for b := range buckets {
		from[b+1] += from[b]
	}
	out := make([]uint32, len(ks))
	next := slices.Clone(from[:buckets])
	for _, k := range ks {
		b := key(k)
		out[next[b]] = k
		next[b]++
	}
	return out, from
}

// loadLevels counts SLO i's verdicts on the placed requests ks (sorted by
// load) at each load: the goodput's denominator and those met.
func (e *Engine) loadLevels(i int, s *loadSweep, ks []uint32) []schema.CapacityLevel {
	var out []schema.CapacityLevel
	exclude := e.slos[i].excludeUnknown
	for _, k := range ks {
		v := e.verdict(int(s.placed[k].idx), i)
		if v&vSelected == 0 {
			continue
		}
		bad := v&vError != 0 || v>>vFailShift&vConstrMask != 0
		unknown := v>>vUnkShift&vConstrMask != 0
		if exclude && unknown && !bad {
			continue // undecidable: outside the goodput's denominator
		}
		level := int64(s.level[k])
		if len(out) == 0 || out[len(out)-1].InFlight != level {
			out = append(out, schema.CapacityLevel{InFlight: level, InFlightMax: level})
		}
		l := &out[len(out)-1]
		l.Requests++
		if !bad && !unknown {
			l.Met++
		}
	}
	return out
}

// mergeLevels merges adjacent levels, from the lowest, until each holds
// at least minRequests; a remainder short of it at the top joins the level
// below. Each level gets its goodput and Wilson interval.
func mergeLevels(levels []schema.CapacityLevel, minRequests int) []schema.CapacityLevel {
	var out []schema.CapacityLevel
	open := false
	for _, l := range levels {
		if !open {
			out = append(out, l)
		} else {
			m := &out[len(out)-1]
			m.InFlightMax, m.Requests, m.Met = l.InFlightMax, m.Requests+l.Requests, m.Met+l.Met
		}
		open = out[len(out)-1].Requests < int64(minRequests)
	}
	if n := len(out); open && n > 1 {
		out[n-2].InFlightMax = out[n-1].InFlightMax
		out[n-2].Requests += out[n-1].Requests
		out[n-2].Met += out[n-1].Met
		out = out[:n-1]
	}
	for i := range out {
		l := &out[i]
		lo, hi := wilson(int(l.Met), int(l.Requests))
		l.Goodput, l.CILow, l.CIHigh = ratio(l.Met, l.Requests), schema.Num(lo), schema.Num(hi)
	}
	return out
}

// knee is the highest load up to which every level holds the objective:
// the upper bound of its 95% interval at or above it, so that a level
// fails only when its requests show it cannot hold it.
func knee(levels []schema.CapacityLevel, objective float64) (string, *int64) {
	for i, l := range levels {
		if float64(l.CIHigh) >= objective {
			continue
		}
		if i == 0 {
			return schema.KneeNone, nil
		}
		k := levels[i-1].InFlightMax
		return schema.KneeFound, &k
	}
	return schema.KneeNotReached, nil
}

func ceilDiv(a, b int64) *int64 {
	n := (a + b - 1) / b
	return &n
}

// replicaKey names the CapacityBy keys set in mask, in option order.
func (e *Engine) replicaKey(mask uint64) string {
	var keys []string
	for i, k := range e.opts.CapacityBy {
		if mask&(1<<i) != 0 {
			keys = append(keys, k)
		}
	}
	return strings.Join(keys, ",")
}
