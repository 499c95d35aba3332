// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmslo/llmslo/internal/contract"
)

// unmatchedAfter is how long spans must arrive with none carrying the
// processor's attributes before the connector says so.
const unmatchedAfter = time.Minute

// unmatchedWatch logs one warning when, for unmatchedAfter, every span the
// connector received lacked the processor's attributes: a connector with no
// processor in front, or reading another prefix, otherwise emits nothing
// and says nothing. After the warning only spans_skipped counts.
type unmatchedWatch struct {
	since   atomic.Int64 // start of the unmatched stretch, Unix ns; 0: none
	warned  atomic.Bool
	foreign atomic.Pointer[string] // a prefix whose metrics.source key was seen
}

// batch updates the watch after a batch: consumed spans end the stretch;
// a batch of only skipped spans starts or extends it. first is the batch's
// first skipped span, looked at for a source key under another prefix.
func (w *unmatchedWatch) batch(c *llmSLOConnector, consumed, skipped int64, first ptrace.Span, now time.Time) {
	if w.warned.Load() {
		return
	}
	if consumed > 0 {
		w.since.Store(0)
		return
	}
	if skipped == 0 {
		return
	}
	w.look(c.src.keys.Prefix, first)
	t := now.UnixNano()
	if w.since.CompareAndSwap(0, t) {
		return
	}
	if t-w.since.Load() >= int64(unmatchedAfter) && w.warned.CompareAndSwap(false, true) {
		foreign := ""
		if p := w.foreign.Load(); p != nil {
			foreign = *p
		}
		c.logger.Warn(unmatchedCause(c.src, foreign))
	}
}

// look remembers a prefix other than ours under which the span carries the
// processor's source key.
func (w *unmatchedWatch) look(prefix string, span ptrace.Span) {
	if w.foreign.Load() != nil {
		return
	}
	for key := range span.Attributes().All() {
		if p, ok := strings.CutSuffix(key, contract.SuffixSource); ok && p != "" && p != prefix {
			p = strings.Clone(p)
			w.foreign.Store(&p)
			return
		}
	}
}

// unmatchedCause names the likely cause of a stretch of spans without the
// processor's attributes.
func unmatchedCause(src *source, foreign string) string {
	head := fmt.Sprintf("for %v the llm_slo connector received spans but none carried %s, so it emits no metrics: ",
		unmatchedAfter, src.keys.Source)
	switch {
	case foreign != "":
		return head + fmt.Sprintf("spans carry %s%s: they were written under attribute_prefix %q, and this connector reads %q",
			foreign, contract.SuffixSource, foreign, src.keys.Prefix)
	case len(src.processors) == 0:
		return head + "no llm_slo processor runs in this collector: put one before the connector in the traces pipeline " +
			fmt.Sprintf("(or, if an earlier collector runs it, check that its attribute_prefix is %q)", src.keys.Prefix)
	default:
		return head + fmt.Sprintf("the llm_slo processors %s write under %q: is one of them in the same traces pipeline, before the connector?",
			strings.Join(src.processors, ", "), src.keys.Prefix)
	}
}
