package aggregate

import (
	"math"
	"sort"

	"github.com/lightstep/go-expohisto/structure"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// MaxExportScale is the largest exponential-histogram scale emitted:
// Prometheus native histograms stop at schema 8, and a finer scale would be
// thrown away on the way in.
const MaxExportScale = 8

// Histogram is one distribution in either OTLP shape.
type Histogram interface {
	Add(v float64)
	Count() uint64
	// Reset empties it (delta temporality).
	Reset()
	// AppendTo writes one data point to the metric (whose type it sets on
	// first use) and returns it, for the caller to add attributes and times.
	AppendTo(m pmetric.Metric) Point
}

// Exponential is a base-2 exponential histogram (go-expohisto), mergeable
// across collectors. Its scale adapts to the range seen within MaxSize
// buckets; it is emitted at a scale of at most MaxExportScale.
type Exponential struct {
	h structure.Histogram[float64]
}

// NewExponential returns a histogram of at most maxSize buckets.
func NewExponential(maxSize int32) *Exponential {
	e := &Exponential{}
	e.h.Init(structure.NewConfig(structure.WithMaxSize(maxSize)))
	return e
}

func (e *Exponential) Add(v float64) { e.h.Update(v) }
func (e *Exponential) Count() uint64 { return e.h.Count() }
func (e *Exponential) Reset()        { e.h.Clear() }

// Quantile estimates a quantile as Prometheus' histogram_quantile does on a
// native histogram: linear interpolation inside the bucket that holds the
// rank, for tests and accuracy checks.
func (e *Exponential) Quantile(q float64) float64 {
	n := e.h.Count()
	if n == 0 {
		return math.NaN()
	}
	rank := q * float64(n)
	seen := float64(e.h.ZeroCount())
	if rank <= seen {
		return 0
	}
	scale := e.h.Scale()
	b := e.h.Positive()
	base := math.Pow(2, math.Pow(2, -float64(scale)))
	for i := uint32(0); i < b.Len(); i++ {
		c := float64(b.At(i))
		if c == 0 {
			continue
		}
		if rank <= seen+c {
			idx := float64(b.Offset()) + float64(i)
			lower, upper := math.Pow(base, idx), math.Pow(base, idx+1)
			return lower + (upper-lower)*(rank-seen)/c
		}
		seen += c
	}
	return e.h.Max()
}

func (e *Exponential) AppendTo(m pmetric.Metric) Point {
	if m.Type() != pmetric.MetricTypeExponentialHistogram {
		m.SetEmptyExponentialHistogram()
	}
	dp := m.ExponentialHistogram().DataPoints().AppendEmpty()
	h := &e.h
	dp.SetCount(h.Count())
	dp.SetSum(h.Sum())
	if h.Count() > 0 {
		dp.SetMin(h.Min())
		dp.SetMax(h.Max())
	}
	dp.SetZeroCount(h.ZeroCount())
	scale := h.Scale()
	shift := max(scale-MaxExportScale, 0)
	dp.SetScale(scale - shift)
	src := h.Positive()
	if src.Len() == 0 {
		return expoPoint{dp}
	}
	// Downscaling merges 2^shift adjacent buckets: index i goes to i>>shift.
	first := src.Offset() >> shift
	last := (src.Offset() + int32(src.Len()) - 1) >> shift
	dst := dp.Positive()
	dst.SetOffset(first)
	counts := dst.BucketCounts()
	counts.EnsureCapacity(int(last - first + 1))
	for range last - first + 1 {
		counts.Append(0)
	}
	for i := uint32(0); i < src.Len(); i++ {
		j := (src.Offset()+int32(i))>>shift - first
		counts.SetAt(int(j), counts.At(int(j))+src.At(i))
	}
	return expoPoint{dp}
}

// Explicit is a histogram with fixed bucket bounds, for classic
// histogram_quantile and for SLO thresholds placed on a bound.
type Explicit struct {
	bounds []float64 // shared, read-only
	counts []uint64
	sum    float64
	count  uint64
	min    float64
	max    float64
}

// NewExplicit returns a histogram over bounds (ascending, shared).
func NewExplicit(bounds []float64) *Explicit {
	return &Explicit{bounds: bounds, counts: make([]uint64, len(bounds)+1)}
}

func (x *Explicit) Add(v float64) {
	// A value equal to a bound belongs to the bucket it closes (le).
	x.counts[sort.SearchFloat64s(x.bounds, v)]++
	if x.count == 0 || v < x.min {
		x.min = v
	}
	if x.count == 0 || v > x.max {
		x.max = v
	}
	x.sum += v
	x.count++
}

func (x *Explicit) Count() uint64 { return x.count }

func (x *Explicit) Reset() {
	clear(x.counts)
	x.sum, x.count, x.min, x.max = 0, 0, 0, 0
}

func (x *Explicit) AppendTo(m pmetric.Metric) Point {
	if m.Type() != pmetric.MetricTypeHistogram {
		m.SetEmptyHistogram()
	}
	dp := m.Histogram().DataPoints().AppendEmpty()
	dp.SetCount(x.count)
	dp.SetSum(x.sum)
	if x.count > 0 {
		dp.SetMin(x.min)
		dp.SetMax(x.max)
	}
	dp.ExplicitBounds().FromRaw(x.bounds)
	dp.BucketCounts().FromRaw(x.counts)
	return explicitPoint{dp}
}

// ScaleForExport is the scale the histogram is emitted at.
func (e *Exponential) ScaleForExport() int32 { return min(e.h.Scale(), MaxExportScale) }
