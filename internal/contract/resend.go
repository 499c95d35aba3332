// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package contract

import "context"

// resentKey marks a context: the spans consumed with it were handed to the
// same consumers before, and refused by one of them.
type resentKey struct{}

// WithResent returns ctx marked as carrying a re-send. The processor's
// trace assembly sends request spans it holds on its own; when the next
// consumer refuses them with a retryable error, it sends them again with
// this mark. The next consumer is usually a fan-out, whose other members
// (the connector beside a refusing exporter) accepted the first send: a
// member that counts spans skips a marked send, so each span is counted
// once whatever the retries. The mark is the context's, not the span's: it
// never reaches an exporter's data, and a later tier that reads the
// exported spans counts them as usual.
func WithResent(ctx context.Context) context.Context {
	return context.WithValue(ctx, resentKey{}, true)
}

// Resent reports whether ctx carries a re-send (WithResent).
func Resent(ctx context.Context) bool {
	v, _ := ctx.Value(resentKey{}).(bool)
	return v
}
