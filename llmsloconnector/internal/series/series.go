// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package series

import (
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/llmslo/llmslo/internal/aggregate"
)

// WindowSlots is the number of steps the sliding windows advance in.
const WindowSlots = aggregate.RatioSlots

// Shape is how a series records: the histograms' kind, the windows'
// sketches and length, and what else it keeps. It is fixed at creation.
type Shape struct {
	// Bounds are the explicit histograms' bounds by Hist; nil: exponential
	// histograms of MaxSize buckets.
	Bounds  *[NumHists][]float64
	MaxSize int32
	Sketch  *aggregate.SketchConfig
	Window  time.Duration
	// Usage keeps the token counters (the metric names have them).
	Usage bool
	// Exemplars keeps the slowest requests' exemplars, MaxExemplars per
	// data point.
	Exemplars    bool
	MaxExemplars int
}

// Series is the state of one dimension set. Every field is the
// connector's own: nothing here refers to pdata of an incoming batch.
type Series struct {
	shape    *Shape
	dims     pcommon.Map // data point attributes
	resource pcommon.Map // output resource attributes
	resKey   string
	layer    Layer
	start    pcommon.Timestamp
	lastSeen time.Time

	hists   [NumHists]aggregate.Histogram
	windows [NumWindows]*aggregate.Window
	// slos[i] counts the SLO of index i in the connector's SLO names; nil
	// until a span of the series carries its verdict.
	slos []*sloCounts
	// usage are the token counters; nil unless the shape keeps them.
	usage *usageCounts
	// exemplars is nil unless the shape keeps exemplars.
	exemplars *Exemplars
}

// Dim is a dimension's name and value.
type Dim struct{ Name, Value string }

// usageCounts are a series' token counters.
type usageCounts struct {
	n    [NumUsage]uint64
	seen uint8 // bit u: counter u has seen a value (cumulative: emitted from then on)
}

func newSeries(shape *Shape, layer Layer, start pcommon.Timestamp) *Series {
	return &Series{shape: shape, dims: pcommon.NewMap(), resource: pcommon.NewMap(), layer: layer, start: start}
}

// setDims copies dims into s; dims[resStart:] are resource dimensions. The
// values are copied: they may point into the batch.
func (s *Series) setDims(dims []Dim, resStart int) {
	s.dims.EnsureCapacity(len(dims) + 2)
	var resKey strings.Builder
	for i, d := range dims {
		if i >= resStart {
			s.resource.PutStr(d.Name, strings.Clone(d.Value))
			resKey.WriteString(d.Name + "=" + d.Value + "\x00")
			continue
		}
		s.dims.PutStr(d.Name, strings.Clone(d.Value))
	}
	s.resKey = resKey.String()
}

// Seen marks the series used at now (series_expiration counts from it).
func (s *Series) Seen(now time.Time) { s.lastSeen = now }

func (s *Series) histogram(k Hist) aggregate.Histogram {
	if s.hists[k] == nil {
		if s.shape.Bounds != nil {
			s.hists[k] = aggregate.NewExplicit(s.shape.Bounds[k])
		} else {
			s.hists[k] = aggregate.NewExponential(s.shape.MaxSize)
		}
	}
	return s.hists[k]
}

func (s *Series) window(w Window) *aggregate.Window {
	if s.windows[w] == nil {
		s.windows[w] = aggregate.NewWindow(s.shape.Sketch, s.shape.Window, WindowSlots)
	}
	return s.windows[w]
}

// AddValues records each value of kind k whose has[k] is set, n times, in
// its histogram and the window that shadows it. Callers hold the series'
// lock, as for every method that records. One call for all of a span's
// values: a call per value was a tenth of the connector's work on a span.
func (s *Series) AddValues(values *[NumHists]float64, has *[NumHists]bool, now time.Time, n uint64) {
	for k := range NumHists {
		if has[k] {
			s.histogram(k).AddN(values[k], n)
			if w := histWindow[k]; w != NumWindows && k != HistITL {
				s.window(w).AddN(now, values[k], n)
			}
		}
	}
}

// AddGaps records a span's inter-token gaps (weights, when not empty, the
// tokens each stands for), n times, in the ITL histogram and window.
func (s *Series) AddGaps(gaps []float64, weights []uint64, now time.Time, n uint64) {
	s.histogram(HistITL).AddAll(gaps, weights, n)
	s.window(histWindow[HistITL]).AddAll(now, gaps, weights, n)
}

// AddVerdict counts a span's verdict of the SLO of index i, standing for n
// requests (weighted: the span stood for more than one). excludeUnknown is
// the SLO's unknown_verdicts: exclude, read when its counters are created.
func (s *Series) AddVerdict(i int, v *Verdict, tokens uint64, now time.Time, n uint64, weighted, excludeUnknown bool) {
	for len(s.slos) <= i {
		s.slos = append(s.slos, nil)
	}
	sc := s.slos[i]
	if sc == nil {
		sc = &sloCounts{goodput: aggregate.NewRatio(s.shape.Window), excludeUnknown: excludeUnknown}
		s.slos[i] = sc
	}
	sc.add(v, tokens, now, n)
	if weighted {
		sc.weighted += n
		sc.weightedSpans++
	}
}

// CountsUsage reports whether the series keeps token counters.
func (s *Series) CountsUsage() bool { return s.shape.Usage }

// AddUsage adds a span's token counts (bit u of has: counts[u] is set), n
// times.
func (s *Series) AddUsage(counts *[NumUsage]uint64, has uint8, n uint64) {
	if s.usage == nil {
		s.usage = &usageCounts{}
	}
	for k := range NumUsage {
		if has&(1<<k) != 0 {
			s.usage.n[k] += aggregate.MulSat(counts[k], n)
		}
	}
	s.usage.seen |= has
}

// Exemplars returns the series' exemplars, creating them; nil when the
// shape keeps none.
func (s *Series) Exemplars() *Exemplars {
	if !s.shape.Exemplars {
		return nil
	}
	if s.exemplars == nil {
		s.exemplars = newExemplars(s.shape.MaxExemplars)
	}
	return s.exemplars
}

// Filled counts the histograms, windows and SLO counters s holds.
func (s *Series) Filled() (hists, windows, slos int) {
	for _, h := range s.hists {
		if h != nil {
			hists++
		}
	}
	for _, w := range s.windows {
		if w != nil {
			windows++
		}
	}
	return hists, windows, len(s.slos)
}

// footprint adds up the bytes s's window sketches and histograms hold.
func (s *Series) footprint() (sketches, hists int) {
	for _, w := range s.windows {
		if w != nil {
			sketches += w.Bytes()
		}
	}
	for _, h := range s.hists {
		if h != nil {
			hists += h.Bytes()
		}
	}
	return sketches, hists
}
