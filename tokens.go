// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloprocessor

import (
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/llmslo/llmslo/internal/contract"
	"github.com/llmslo/llmslo/internal/derive"
)

// putTokenDetails writes the cache and reasoning token counts the producer
// gave, under the contract's keys.
func putTokenDetails(attrs pcommon.Map, k *contract.Keys, res *derive.Result) {
	if res.HasCacheReadInputTokens {
		attrs.PutInt(k.CacheReadInputTokens, res.CacheReadInputTokens)
	}
	if res.HasCacheWriteInputTokens {
		attrs.PutInt(k.CacheWriteInputTokens, res.CacheWriteInputTokens)
	}
	if res.HasReasoningOutputTokens {
		attrs.PutInt(k.ReasoningOutputTokens, res.ReasoningOutputTokens)
	}
}
