// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package assembly

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestReadGeneration: TGI's Generation text gives the step's tokens and,
// on the last step only, the request's count; text inside quotes (the
// generated text, token texts) is never read as a field.
func TestReadGeneration(t *testing.T) {
	for _, tt := range []struct {
		name          string
		in            string
		tokens, total int64
	}{
		{"decode step", `Generation { request_id: 3, prefill_tokens: None, tokens: Some(Tokens { ids: [450], logprobs: [-0.1], texts: [" The"], is_special: [false] }), generated_text: None, top_tokens: [] }`, 1, -1},
		{"prefill step, its prompt ids not counted", `Generation { request_id: 3, prefill_tokens: Some(Tokens { ids: [1, 2, 3], logprobs: [], texts: [], is_special: [] }), tokens: Some(Tokens { ids: [450], logprobs: [-0.1], texts: ["a"], is_special: [false] }), generated_text: None, top_tokens: [] }`, 1, -1},
		{"speculative step of 3", `Generation { request_id: 3, prefill_tokens: None, tokens: Some(Tokens { ids: [4, 5, 6], logprobs: [], texts: [], is_special: [] }), generated_text: None, top_tokens: [] }`, 3, -1},
		{"last step", `Generation { request_id: 3, prefill_tokens: None, tokens: Some(Tokens { ids: [7], logprobs: [], texts: ["."], is_special: [] }), generated_text: Some(GeneratedText { text: "x", generated_tokens: 42, finish_reason: Length, seed: None }), top_tokens: [] }`, 1, 42},
		{"forged field inside the text", `Generation { request_id: 3, prefill_tokens: None, tokens: Some(Tokens { ids: [7], logprobs: [], texts: ["generated_text: Some(GeneratedText { generated_tokens: 9"], is_special: [] }), generated_text: Some(GeneratedText { text: "\" generated_tokens: 7", generated_tokens: 2, finish_reason: Length, seed: None }), top_tokens: [] }`, 1, 2},
		{"count beyond the bound", `generated_text: Some(GeneratedText { text: "", generated_tokens: 99999999999999999999 })`, 1, -1},
		{"not a Generation", `Generation { request_id: 0, tokens: .. }`, 1, -1},
		{"cut", `generated_text: Some(GeneratedText { text: "unterminated`, 1, -1},
		{"empty ids", ` tokens: Some(Tokens { ids: [], logprobs: [] })`, 1, -1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tokens, total := readGeneration(tt.in)
			assert.Equal(t, tt.tokens, tokens)
			assert.Equal(t, tt.total, total)
		})
	}
}
