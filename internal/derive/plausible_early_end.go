// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package derive

import (
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmslo/llmslo/internal/preset"
)

// Rule: a span that ends before its stream could have. Traceloop's OpenAI
// instrumentation does not instrument Responses API streams ("not yet
// instrumented" upstream): it ends the span when create() resolves, before
// the first event, with the request's attributes only; its non-streamed
// spans always carry the response id and the usage. A span of such a
// producer (preset.EndsStreamsEarly) with neither, no output events and
// no error is such a stream: its E2E (the span's end) is 54-235 ms short,
// so it is left unknown (e2e:implausible), and so are TTFT and TPOT.
func (r *request) endedBeforeStream() {
	res := r.res
	if !r.client || res.Failed || res.HasOutputTokens || r.hasOutput || res.E2E.S != Known {
		return
	}
	keys, ok := preset.EndsStreamsEarly(r.scope.Name)
	if !ok || anyAttr(r.span, keys) {
		return
	}
	res.E2E = Value{}
	r.e2eNs = -1
	r.errs.Set(FieldE2E, Implausible)
	if res.TTFT.S == NotApplicable {
		res.TTFT = Value{}
	}
	res.Stream = True
}

// anyAttr reports whether the span carries one of keys.
func anyAttr(span ptrace.Span, keys []string) bool {
	for _, k := range keys {
		if hasAttr(span, k) {
			return true
		}
	}
	return false
}
