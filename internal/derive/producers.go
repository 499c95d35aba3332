// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package derive

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmslo/llmslo/internal/preset"
)

// unflaggedStream says whether a request whose span carries no stream flag
// and no output events streamed. A producer whose span names say it is
// believed (the Vercel AI SDK's doStream and doGenerate spans, Strands'
// chat span). Otherwise, on the client layer, the conventions' time to
// first chunk says streamed whatever the conventions' version (it is written
// on streamed calls only: AI SDK 7, Pydantic AI), and its absence says not
// streamed where the producer writes it on every stream (AI SDK 7's scope,
// preset.ChunkTTFTOnEveryStream), and so does the absence of the stream
// flag where the producer flags every stream (preset.StreamFlagOnEveryStream,
// the Anthropic SDK's tracing). Without them, it depends on
// the version of the conventions the producer follows: from v1.41
// (StreamFlagRequired) an unset gen_ai.request.stream means not streamed,
// unless the span carries the preset's TTFT attribute (a first chunk is
// evidence of a stream); before v1.41, or when the version is unknown,
// emitters never set the flag even when streaming, so the stream stays
// unknown. Engine spans are left unknown: their TTFT holds whatever the flag.
func (c *compiled) unflaggedStream(span ptrace.Span, scope *Scope, s *scratch) Tri {
	name := c.streamName(span)
	if c.streamByName != nil {
		if streamed, ok := c.streamByName[name]; ok {
			if streamed {
				return True
			}
			return False
		}
	}
	if c.p.Layer != preset.LayerClient {
		return Unknown
	}
	if _, _, chunk := firstTiming(c.chunkTTFT, s); chunk {
		return True
	}
	if witness, ok := preset.ChunkTTFTOnEveryStream(scope.Name); ok && hasAttr(span, witness) {
		return False
	}
	if preset.StreamFlagOnEveryStream(scope.Name) {
		return False
	}
	if !scope.Semconv.AtLeast(StreamFlagRequired) {
		return Unknown
	}
	if _, _, ttft := firstTiming(c.ttft, s); ttft && !c.p.TTFTNeedsStreamFlag {
		return True
	}
	return False
}

// streamName is what StreamBySpanName is looked up by: the span's
// StreamNameAttribute when it carries one (the AI SDK's ai.operationId,
// which survives Traceloop renaming the span), else its name.
func (c *compiled) streamName(span ptrace.Span) string {
	if key := c.p.StreamNameAttribute; key != "" {
		if v, ok := span.Attributes().Get(key); ok && v.Type() == pcommon.ValueTypeStr {
			return v.Str()
		}
	}
	return span.Name()
}

// tokenDetails records the cache and reasoning token counts the producer
// gives. They are never derived, and a bad one is left out with its error.
func (c *compiled) tokenDetails(s *scratch, res *Result) {
	errs := &res.Errors
	res.CacheReadInputTokens, res.HasCacheReadInputTokens = countValue(c.cacheRead, s, FieldCacheReadInputTokens, errs)
	res.CacheWriteInputTokens, res.HasCacheWriteInputTokens = countValue(c.cacheWrite, s, FieldCacheWriteInputTokens, errs)
	res.ReasoningOutputTokens, res.HasReasoningOutputTokens = countValue(c.reasoning, s, FieldReasoningOutputTokens, errs)
}

// hasAttr reports whether the span carries key; the empty key is carried
// by every span. It reads the span's attributes, so it is asked only on
// the rare path of a span with no stream evidence of its own.
func hasAttr(span ptrace.Span, key string) bool {
	if key == "" {
		return true
	}
	_, ok := span.Attributes().Get(key)
	return ok
}
