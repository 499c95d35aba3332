package llmsloconnector

import (
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/llmslo/llmslo/internal/aggregate"
	"github.com/llmslo/llmslo/internal/derive"
)

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
	slos    map[string]*sloCounts
	sloKeys []string // emission order: first seen first
}

type sloCounts struct {
	selected, met, violated, unknown, tokensMet uint64
	violations                                  map[string]uint64
	violationKeys                               []string
	goodput                                     *aggregate.Ratio
}

// observation is what one span contributes, read from it before the series
// lock is taken.
type observation struct {
	layer  layerIndex
	values [numHistKinds]float64
	has    [numHistKinds]bool
	gaps   []float64
	slos   []sloObservation
	tokens uint64 // output tokens, for token goodput
	// rejected counts values kept out of the histograms.
	rejected int
}

type sloObservation struct {
	name       string
	decided    bool
	met        bool
	violations pcommon.Slice // valid until the batch is released
	hasViol    bool
}

// set records a value of kind k unless it is negative, not finite, or
// beyond the processor's own limits (a week; 2^24 tokens): such a value is
// corrupt, and would also stretch the window sketches' memory.
func (o *observation) set(k histKind, v float64) {
	limit := float64(derive.MaxSeconds)
	if k == histInputTokens || k == histOutputTokens {
		limit = derive.MaxTokens
	}
	if v >= 0 && v <= limit {
		o.values[k], o.has[k] = v, true
	}
}

func (c *llmSLOConnector) newHistogram(k histKind) aggregate.Histogram {
	if c.bounds != nil {
		return aggregate.NewExplicit(c.bounds[k])
	}
	return aggregate.NewExponential(c.maxSize)
}

// record adds o to s. Caller holds the shard lock.
func (c *llmSLOConnector) record(s *series, o *observation, now time.Time) {
	s.lastSeen = now
	for k := range numHistKinds {
		if !o.has[k] {
			continue
		}
		if s.hists[k] == nil {
			s.hists[k] = c.newHistogram(k)
		}
		s.hists[k].Add(o.values[k])
	}
	if len(o.gaps) > 0 {
		if s.hists[histITL] == nil {
			s.hists[histITL] = c.newHistogram(histITL)
		}
		s.hists[histITL].AddAll(o.gaps)
	}
	for w, k := range [numWindowKinds]histKind{histTTFT, histTPOT, histITL, histE2E} {
		vals := o.values[k : k+1]
		if k == histITL {
			vals = o.gaps
		} else if !o.has[k] {
			continue
		}
		if len(vals) == 0 {
			continue
		}
		if s.windows[w] == nil {
			s.windows[w] = aggregate.NewWindow(c.sketch, c.cfg.Window, windowSlots)
		}
		s.windows[w].AddAll(now, vals)
	}
	for i := range o.slos {
		so := &o.slos[i]
		sc := s.slos[so.name]
		if sc == nil {
			if s.slos == nil {
				s.slos = map[string]*sloCounts{}
			}
			sc = &sloCounts{violations: map[string]uint64{}, goodput: aggregate.NewRatio(c.cfg.Window, windowSlots)}
			name := cloneString(so.name)
			s.slos[name] = sc
			s.sloKeys = append(s.sloKeys, name)
		}
		sc.selected++
		switch {
		case !so.decided:
			sc.unknown++
		case so.met:
			sc.met++
			sc.tokensMet += o.tokens
		default:
			sc.violated++
		}
		sc.goodput.Add(now, so.decided && so.met)
		if so.hasViol {
			for _, v := range so.violations.All() {
				name := v.AsString()
				if _, ok := sc.violations[name]; !ok {
					name = cloneString(name)
					sc.violationKeys = append(sc.violationKeys, name)
				}
				sc.violations[name]++
			}
		}
	}
}

// windowSlots is the number of steps the sliding windows advance in.
const windowSlots = 6

func cloneString(s string) string { return string([]byte(s)) }
