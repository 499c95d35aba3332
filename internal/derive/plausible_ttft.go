// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package derive

import "github.com/llmslo/llmslo/internal/preset"

// Rule: a TTFT measured between the wrong events is qualified, not
// replaced. Producers that do so:
//   - AI SDK 5 (and 4), Langfuse: the first stream part of any kind, a
//     role-only chunk too (early by the role chunk's lead), ttft=first_part;
//     AI SDK 6 and 7 stamp the first text part and are told apart by the
//     usage details only they write (preset.FirstPartUnless).
//   - OpenLIT (Python and TypeScript): its stream wrapper starts its clock
//     when create() returns (the response headers) and stamps the first
//     server-sent event of any kind (the role chunk, Anthropic's
//     message_start), ttft=first_event: 35-61 ms against a true 123-164 ms.
//
// The value is kept (it is the producer's); Result.TTFTQualified lets an SLO
// take it as unknown (qualified_ttft: unknown), and the qualifier in
// llm.metrics.source shows how much of an SLO rests on such values.

// ttftQualifier is the qualifier of a TTFT read from attribute x.
func ttftQualifier(x preset.TimingAttr) string {
	switch {
	case x.FirstPart:
		return QualifierTTFTFirstPart
	case x.FirstEvent:
		return QualifierTTFTFirstEvent
	}
	return ""
}

// noteTTFTQualifier qualifies a known TTFT with q, unless q is the first
// part's and the span shows a release that stamps the first output:
// without that evidence the TTFT is taken as early, never as right.
func (r *request) noteTTFTQualifier(q string) {
	if q == "" || r.res.TTFT.S != Known {
		return
	}
	if q == QualifierTTFTFirstPart {
		if _, later := first(r.c.firstPartUnless, r.s); later {
			return
		}
	}
	r.res.Qualifiers = append(r.res.Qualifiers, q)
	r.res.TTFTQualified = true
}
