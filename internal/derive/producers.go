// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package derive

import "github.com/llmslo/llmslo/internal/preset"

// unflaggedStream says whether a request whose span carries no stream flag
// and no output events streamed. A producer whose span names say it is
// believed (the Vercel AI SDK's doStream and doGenerate spans, Strands'
// chat span). Otherwise, on the client layer, it depends on the version of
// the conventions the producer follows: from v1.41 (StreamFlagRequired) an
// unset gen_ai.request.stream means not streamed, unless the span carries
// the preset's TTFT attribute (a first chunk is evidence of a stream);
// before v1.41, or when the version is unknown, emitters never set the flag
// even when streaming, so the stream stays unknown. Engine spans are left
// unknown: their TTFT holds whatever the flag.
func (c *compiled) unflaggedStream(name string, scope *Scope, s *scratch) Tri {
	if c.streamByName != nil {
		if streamed, ok := c.streamByName[name]; ok {
			if streamed {
				return True
			}
			return False
		}
	}
	if c.p.Layer != preset.LayerClient || !scope.Semconv.AtLeast(StreamFlagRequired) {
		return Unknown
	}
	if _, _, ttft := firstTiming(c.ttft, s); ttft && !c.p.TTFTNeedsStreamFlag {
		return True
	}
	return False
}

// tokenDetails records the cache and reasoning token counts the producer
// gives. They are never derived, and a bad one is left out with its error.
func (c *compiled) tokenDetails(s *scratch, res *Result) {
	errs := &res.Errors
	res.CacheReadInputTokens, res.HasCacheReadInputTokens = countValue(c.cacheRead, s, FieldCacheReadInputTokens, errs)
	res.CacheWriteInputTokens, res.HasCacheWriteInputTokens = countValue(c.cacheWrite, s, FieldCacheWriteInputTokens, errs)
	res.ReasoningOutputTokens, res.HasReasoningOutputTokens = countValue(c.reasoning, s, FieldReasoningOutputTokens, errs)
}
