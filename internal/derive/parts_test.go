// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package derive

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestParts: the engines' parts of TTFT and E2E, by producer, and the same
// refusal of a bad value as every other field (a missing value, its reason
// in Errors).
func TestParts(t *testing.T) {
	engine := map[string]any{"gen_ai.latency.time_to_first_token": 0.162, "gen_ai.latency.e2e": 1.2, "gen_ai.usage.completion_tokens": 128}
	with := func(base map[string]any, kv ...any) map[string]any {
		out := map[string]any{}
		for k, v := range base {
			out[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			out[kv[i].(string)] = kv[i+1]
		}
		return out
	}
	const (
		prefill = "gen_ai.latency.time_in_model_prefill"
		decode  = "gen_ai.latency.time_in_model_decode"
		kv      = "gen_ai.latency.kv_cache_transfer_time"
	)
	tests := []struct {
		name                string
		span                string
		attrs               map[string]any
		prefill, kv, decode Value
		err                 string
	}{
		{"vllm", "llm_request", with(engine, prefill, 0.15, decode, 1.03), k(0.15), missing, k(1.03), ""},
		{"trtllm", "llm_request", with(engine, kv, 0.002), missing, k(0.002), missing, ""},
		// SGLang's prefill includes its scheduler's queue: not read.
		{"sglang", " Req 1a2b3c4d", with(engine, "rid", "1a2b3c4d", prefill, 0.19, decode, 0.7), missing, missing, k(0.7), ""},
		{"negative", "llm_request", with(engine, prefill, -0.1), missing, missing, missing, "prefill_time:invalid_value"},
		{"beyond a week", "llm_request", with(engine, decode, 7*24*3600.0+1), missing, missing, missing, "decode_time:out_of_range"},
		{"a word", "llm_request", with(engine, kv, "fast"), missing, missing, missing, "kv_transfer_time:invalid_value"},
		{"a bool", "llm_request", with(engine, prefill, true), missing, missing, missing, "prefill_time:invalid_type"},
		{"a decimal string", "llm_request", with(engine, prefill, " 0.125 "), k(0.125), missing, missing, ""},
		// Parts longer than what they divide are a sender's, not a
		// request's: refused, never a cause.
		{"a prefill of a day on a 0.162 s TTFT", "llm_request", with(engine, prefill, 86400.0), missing, missing, missing, "prefill_time:implausible"},
		{"a KV transfer longer than the TTFT", "llm_request", with(engine, kv, 0.2), missing, missing, missing, "kv_transfer_time:implausible"},
		{"a decode longer than the E2E", "llm_request", with(engine, decode, 1.3), missing, missing, missing, "decode_time:implausible"},
		{"a prefill equal to the TTFT, within the clocks' slack", "llm_request", with(engine, prefill, 0.1636), k(0.1636), missing, missing, ""},
		{"a prefill just beyond the slack", "llm_request", with(engine, prefill, 0.1648), missing, missing, missing, "prefill_time:implausible"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := derive(t, Options{}, newSpan(tt.span, 1300, tt.attrs))
			assert.Equal(t, tt.prefill, r.PrefillTime, "prefill")
			assert.Equal(t, tt.kv, r.KVTransferTime, "kv transfer")
			assert.Equal(t, tt.decode, r.DecodeTime, "decode")
			assert.Equal(t, tt.err, r.Errors.String())
			assert.Equal(t, k(0.162), r.TTFT, "a bad part spoils no other value")
		})
	}
}
