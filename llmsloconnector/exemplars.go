// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
	"github.com/llmslo/llmslo/internal/exemplar"
)

// seriesExemplars are one series' slowest requests of the flush interval:
// per latency histogram, and per SLO for its violated-requests counter.
// Each flush writes them to the points and forgets them, so an exemplar
// lives one export cycle.
type seriesExemplars struct {
	hists [numHistKinds]exemplar.Slowest
	// violated[i] is the SLO of index i in the connector's sloNames.
	violated []exemplar.Slowest
}

// carriesExemplars: the latency histograms do; token counts are not what an
// SRE chases from a spike to a trace.
func carriesExemplars(k histKind) bool { return histUnit(k) == unitSeconds }

// offerExemplars offers o's values, with the span they came from, to s's
// exemplars. ITL offers the span's largest gap: one exemplar candidate per
// span, whatever the number of gaps. A violated request is ranked by its
// E2E, else its duration (a failed request has only that). Caller holds the
// series' lock.
func (c *llmSLOConnector) offerExemplars(s *series, o *observation) {
	ex := s.exemplars
	if ex == nil {
		ex = &seriesExemplars{}
		for k := range numHistKinds {
			if carriesExemplars(k) {
				ex.hists[k] = exemplar.NewSlowest(c.cfg.Exemplars.MaxPerDataPoint)
			}
		}
		s.exemplars = ex
	}
	e := o.ref
	for k := range numHistKinds {
		if o.has[k] && carriesExemplars(k) {
			e.Value = o.values[k]
			ex.hists[k].Offer(e)
		}
	}
	if len(o.gaps) > 0 {
		e.Value = maxOf(o.gaps)
		ex.hists[histITL].Offer(e)
	}
	e.Value = o.values[histDuration]
	if o.has[histE2E] {
		e.Value = o.values[histE2E]
	}
	for i := range o.slos {
		so := &o.slos[i]
		if !so.decided || so.met {
			continue
		}
		for len(ex.violated) <= so.index {
			ex.violated = append(ex.violated, exemplar.NewSlowest(c.cfg.Exemplars.MaxPerDataPoint))
		}
		ex.violated[so.index].Offer(e)
	}
}

func maxOf(vs []float64) float64 {
	m := vs[0]
	for _, v := range vs[1:] {
		m = max(m, v)
	}
	return m
}
