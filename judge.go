// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloprocessor

import (
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/llmslo/llmslo/internal/derive"
)

// judge judges s on the request into st.verdict: against the configured
// thresholds, or, when s reads per-request ones, against the request's. A
// malformed or too loose per-request threshold is reported in
// llm.metrics.error (written
// again, as writeValues wrote it before the verdicts).
func (p *llmSLOProcessor) judge(s *compiledSLO, attrs pcommon.Map, st *batchState) {
	res := &st.res
	if s.From == nil {
		s.Judge(res, &st.verdict)
		return
	}
	if r := s.LimitsFor(attrs, &st.limits); r != derive.NoReason && res.Errors[derive.FieldSLOThreshold] == derive.NoReason {
		res.Errors.Set(derive.FieldSLOThreshold, r)
		attrs.PutStr(p.keys.Error, p.errorString(&res.Errors))
	}
	s.JudgeLimits(res, &st.limits, &st.verdict)
}
