// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package series

import (
	"github.com/llmslo/llmslo/internal/exemplar"
)

// Exemplars are one series' slowest requests of the flush interval: per
// latency histogram, and per SLO for its violated-requests counter. Each
// flush writes them to the points and forgets them, so an exemplar lives
// one export cycle.
type Exemplars struct {
	perPoint int // exemplars per data point
	hists    [NumHists]exemplar.Slowest
	// violated[i] is the SLO of index i in the connector's SLO names.
	violated []exemplar.Slowest
}

func newExemplars(perPoint int) *Exemplars {
	ex := &Exemplars{perPoint: perPoint}
	for k := range NumHists {
		if carriesExemplars(k) {
			ex.hists[k] = exemplar.NewSlowest(perPoint)
		}
	}
	return ex
}

// Offer offers e as an exemplar of histogram k; only the latency
// histograms keep them.
func (ex *Exemplars) Offer(k Hist, e exemplar.Exemplar) {
	if carriesExemplars(k) {
		ex.hists[k].Offer(e)
	}
}

// OfferViolated offers e as an exemplar of the violated requests of the
// SLO of index i.
func (ex *Exemplars) OfferViolated(i int, e exemplar.Exemplar) {
	for len(ex.violated) <= i {
		ex.violated = append(ex.violated, exemplar.NewSlowest(ex.perPoint))
	}
	ex.violated[i].Offer(e)
}
