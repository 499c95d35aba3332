// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/llmslo/llmslo/internal/aggregate"
	"github.com/llmslo/llmslo/internal/contract"
)

// windowSlots is the number of steps the sliding windows advance in.
const windowSlots = aggregate.RatioSlots

// series is the state of one dimension set. Every field is the connector's
// own: nothing here refers to pdata of an incoming batch.
type series struct {
	dims     pcommon.Map // data point attributes
	resource pcommon.Map // output resource attributes
	resKey   string
	layer    layerIndex
	start    pcommon.Timestamp
	lastSeen time.Time

	hists   [numHistKinds]aggregate.Histogram
	windows [numWindowKinds]*aggregate.Window
	// slos[i] counts the SLO of index i in the connector's sloNames; nil
	// until a span of the series carries its verdict.
	slos []*sloCounts
	// usage are the token counters; nil unless the metric names have them.
	usage *usageCounts
	// exemplars is nil unless exemplars are enabled.
	exemplars *seriesExemplars
}

// sloCounts are one SLO's counters in one series: a single allocation.
type sloCounts struct {
	selected, met, violated, unknown, tokensMet uint64
	// weighted counts the requests of selected that came from spans
	// standing for more than one request; weightedSpans those spans.
	weighted, weightedSpans uint64
	violations              [maxViolationNames]uint64 // by violationNames index, without a cause
	// causes[k][c] counts the violations of constraint k for cause c.
	causes  [contract.NumConstraints][contract.NumCauses]uint64
	goodput aggregate.Ratio
	// excludeUnknown leaves unknown verdicts out of goodput: met / (met +
	// violated), the SLO's unknown_verdicts: exclude. The counters count
	// every verdict either way.
	excludeUnknown bool
}

type dimValue struct{ name, value string }

// newSeries creates the series of a dimension set; dims[resStart:] are
// resource dimensions. The values are copied: they may point into the
// batch.
func (c *llmSLOConnector) newSeries(dims []dimValue, resStart int, layer layerIndex) *series {
	s := c.emptySeries(layer)
	s.dims.EnsureCapacity(len(dims) + 2)
	var resKey strings.Builder
	for i, d := range dims {
		if i >= resStart {
			s.resource.PutStr(d.name, strings.Clone(d.value))
			resKey.WriteString(d.name + "=" + d.value + "\x00")
			continue
		}
		s.dims.PutStr(d.name, strings.Clone(d.value))
	}
	c.putCommonDims(s)
	s.resKey = resKey.String()
	return s
}

func (c *llmSLOConnector) emptySeries(layer layerIndex) *series {
	return &series{dims: pcommon.NewMap(), resource: pcommon.NewMap(), layer: layer, start: c.seriesStart()}
}

// putCommonDims adds the layer and the instance id.
func (c *llmSLOConnector) putCommonDims(s *series) {
	s.dims.PutStr(c.src.keys.Layer, layerNames[s.layer])
	if c.instance != "" {
		s.dims.PutStr(attrCollectorInstance, c.instance)
	}
}

// seriesStart is the start timestamp of a new series: its creation for
// cumulative temporality (stable for the series' life), the previous flush
// for delta, so successive delta points tile time.
func (c *llmSLOConnector) seriesStart() pcommon.Timestamp {
	if c.cfg.AggregationTemporality == temporalityDelta {
		return pcommon.Timestamp(c.lastFlush.Load())
	}
	return pcommon.NewTimestampFromTime(c.now())
}

// record adds o to s, n times: n is the span's adjusted count, rounded by
// the caller's Rounder (1 for an unsampled span). Caller holds the series'
// lock, which also guards the Rounder.
func (c *llmSLOConnector) record(s *series, o *observation, now time.Time, n uint64) {
	s.lastSeen = now
	c.recordHistograms(s, o, n)
	c.recordWindows(s, o, now, n)
	c.recordSLOs(s, o, now, n)
	if c.names.counters() {
		c.recordUsage(s, o, n)
	}
	if c.cfg.Exemplars.Enabled {
		c.offerExemplars(s, o)
	}
}

func (c *llmSLOConnector) histogram(s *series, k histKind) aggregate.Histogram {
	if s.hists[k] == nil {
		if c.bounds != nil {
			s.hists[k] = aggregate.NewExplicit(c.bounds[k])
		} else {
			s.hists[k] = aggregate.NewExponential(c.maxSize)
		}
	}
	return s.hists[k]
}

func (c *llmSLOConnector) recordHistograms(s *series, o *observation, n uint64) {
	for k := range numHistKinds {
		if o.has[k] {
			c.histogram(s, k).AddN(o.values[k], n)
		}
	}
	if len(o.gaps) > 0 {
		c.histogram(s, histITL).AddAll(o.gaps, o.weights, n)
	}
}

func (c *llmSLOConnector) window(s *series, w windowKind) *aggregate.Window {
	if s.windows[w] == nil {
		s.windows[w] = aggregate.NewWindow(c.sketch, c.cfg.Window, windowSlots)
	}
	return s.windows[w]
}

func (c *llmSLOConnector) recordWindows(s *series, o *observation, now time.Time, n uint64) {
	for w, k := range windowHist {
		switch {
		case k == histITL:
			if len(o.gaps) > 0 {
				c.window(s, windowKind(w)).AddAll(now, o.gaps, o.weights, n)
			}
		case o.has[k]:
			c.window(s, windowKind(w)).AddN(now, o.values[k], n)
		}
	}
}

func (c *llmSLOConnector) recordSLOs(s *series, o *observation, now time.Time, n uint64) {
	for i := range o.slos {
		so := &o.slos[i]
		for len(s.slos) <= so.index {
			s.slos = append(s.slos, nil)
		}
		sc := s.slos[so.index]
		if sc == nil {
			sc = &sloCounts{goodput: aggregate.NewRatio(c.cfg.Window), excludeUnknown: c.src.names.excludesUnknown(so.index)}
			s.slos[so.index] = sc
		}
		sc.add(so, o.tokens, now, n)
		if o.adjusted > 1 {
			sc.weighted += n
			sc.weightedSpans++
		}
	}
}

// add counts one span standing for n requests.
func (sc *sloCounts) add(so *sloObservation, tokens uint64, now time.Time, n uint64) {
	sc.selected += n
	switch {
	case !so.decided:
		sc.unknown += n
	case so.met:
		sc.met += n
		sc.tokensMet += aggregate.MulSat(tokens, n)
	default:
		sc.violated += n
	}
	if so.decided || !sc.excludeUnknown {
		sc.goodput.AddN(now, so.decided && so.met, n)
	}
	sc.addViolations(so, n)
}
