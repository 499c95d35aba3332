// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package assembly

import "strings"

// The fields of TGI's Generation (its Rust Debug text) that say how many
// tokens a step carries and how many the request generated. The step's own
// tokens are the field "tokens", preceded by a space; "prefill_tokens" and
// "top_tokens" hold other token lists.
const (
	genTokensIDs     = "tokens: Some(Tokens { ids: ["
	genFinal         = "generated_text: Some("
	genGeneratedToks = "generated_tokens: "
)

// readGeneration reads a step's Generation text: the tokens of the step
// (the entries of its tokens' ids; 1 when absent or empty) and, when the
// step is the request's last (generated_text is Some), the request's token
// count; total is -1 otherwise. Quoted strings (the generated text, token
// texts) are skipped, so no text a model writes is read as a field. One
// pass over s, no allocation.
func readGeneration(s string) (tokens, total int64) {
	tokens, total = 1, -1
	final := false
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '"':
			i = skipQuoted(s, i)
		case i > 0 && s[i-1] == ' ' && strings.HasPrefix(s[i:], genTokensIDs):
			i += len(genTokensIDs)
			var n int64
			i, n = countIDs(s, i)
			if n > 0 {
				tokens = n
			}
		case strings.HasPrefix(s[i:], genFinal):
			final = true
			i += len(genFinal) - 1
		case final && strings.HasPrefix(s[i:], genGeneratedToks):
			if n, ok := leadingInt(s[i+len(genGeneratedToks):]); ok {
				total = n
			}
			return tokens, total
		}
	}
	return tokens, total
}

// skipQuoted returns the index of the quote closing the string opened at
// s[i], or the last index when it is not closed.
func skipQuoted(s string, i int) int {
	for i++; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return len(s) - 1
}

// countIDs counts the comma-separated entries from s[i] to the closing
// bracket, and returns the bracket's index.
func countIDs(s string, i int) (int, int64) {
	var n int64
	empty := true
	for ; i < len(s) && s[i] != ']'; i++ {
		switch {
		case s[i] == ',':
			n++
		case s[i] >= '0' && s[i] <= '9':
			empty = false
		}
	}
	if empty {
		return i, 0
	}
	return i, n + 1
}

// leadingInt parses the decimal digits at the start of s, refusing a
// number beyond maxCounter.
func leadingInt(s string) (int64, bool) {
	var n int64
	i := 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		n = n*10 + int64(s[i]-'0')
		if n > maxCounter {
			return 0, false
		}
	}
	return n, i > 0
}
