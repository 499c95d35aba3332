// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
	"github.com/llmslo/llmslo/internal/adjusted"
	"github.com/llmslo/llmslo/llmsloconnector/internal/series"
)

// scratch is the per-call working memory of ConsumeTraces, pooled so that
// a span whose series exists allocates nothing.
type scratch struct {
	key    []byte
	obs    observation
	dims   []series.Dim
	fields spanFields
	// resource holds the dimension values of the resource being read.
	resource resourceValues
	// Telemetry counts of one batch, added once per ConsumeTraces.
	rejected, ignored, overflowed, malformedTracestate int64
	labels                                             labelFixes
	// The last tracestate read and its adjusted count; lastTS points into
	// the batch, so ConsumeTraces clears it before the scratch is pooled.
	lastTS      string
	lastTSRead  bool
	lastN       float64
	lastOutcome adjusted.Outcome
}

func (c *llmSLOConnector) getScratch() *scratch {
	if s, ok := c.scratch.Get().(*scratch); ok {
		s.rejected, s.ignored, s.overflowed, s.malformedTracestate, s.labels = 0, 0, 0, 0, labelFixes{}
		return s
	}
	n := len(c.cfg.Dimensions)
	return &scratch{fields: spanFields{extra: make([]string, n), extraOK: make([]bool, n)}}
}

// putScratch pools sc once it refers to nothing of the batch.
func (c *llmSLOConnector) putScratch(sc *scratch) {
	sc.lastTS, sc.lastTSRead = "", false
	sc.fields.clear()
	sc.resource.clear()
	clear(sc.obs.slos[:cap(sc.obs.slos)]) // their names point into the batch
	c.scratch.Put(sc)
}
