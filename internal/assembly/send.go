// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package assembly

import (
	"context"
	"time"

	"github.com/llmslo/llmslo/internal/contract"

	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/llmslo/llmslo/internal/derive"
)

// takeReleased returns the requests released so far and not yet sent
// (fresh) and those refused before (again), and, if complete is set, the
// held requests whose steps are now complete (with fresh).
func (a *Assembler) takeReleased(complete bool) (fresh, again ptrace.Traces) {
	fresh, again = ptrace.NewTraces(), ptrace.NewTraces()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.takeRetries(fresh, again, a.now(), false)
	if !complete {
		return fresh, again
	}
	for _, e := range a.traces {
		if len(e.held) > 0 && e.complete() {
			a.remove(e)
			a.releaseInto(fresh, e, false)
		}
	}
	return fresh, again
}

// expire releases held requests past their deadline (all of them when all
// is set) and drops step-only traces whose request never came; again are
// the refused requests due for another send.
func (a *Assembler) expire(now time.Time, all bool) (fresh, again ptrace.Traces) {
	fresh, again = ptrace.NewTraces(), ptrace.NewTraces()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.takeRetries(fresh, again, now, all)
	for el := a.byAge.Front(); el != nil; {
		e := el.Value.(*traceEntry)
		el = el.Next()
		switch {
		case all:
		case len(e.held) > 0:
			if now.Before(e.held[0].deadline) {
				continue
			}
		case now.Sub(e.created) < 2*a.cfg.Wait:
			// Steps whose request has not come yet.
			continue
		case len(e.steps) > 0:
			a.tel.Evicted(EvictOrphanSteps, 1)
		}
		a.remove(e)
		a.releaseInto(fresh, e, false)
	}
	return fresh, again
}

// takeRetries moves the released spans into fresh and the refused ones
// into again, unless the next consumer refused the last send and its retry
// pause runs until after now (all: at shutdown, regardless). The sets are
// the assembly's own. Caller holds mu.
func (a *Assembler) takeRetries(fresh, again ptrace.Traces, now time.Time, all bool) {
	if all || !now.Before(a.retryAt) {
		a.released.ResourceSpans().MoveAndAppendTo(fresh.ResourceSpans())
		a.refused.ResourceSpans().MoveAndAppendTo(again.ResourceSpans())
	}
}

// send sends the spans refused before, marked as a re-send
// (contract.WithResent: a connector in the same fan-out counted them at
// their first send), then the fresh ones. The first refusal is returned.
func (a *Assembler) send(ctx context.Context, fresh, again ptrace.Traces, final bool) error {
	errAgain := a.emit(contract.WithResent(ctx), again, final)
	errFresh := a.emit(ctx, fresh, final)
	if errAgain != nil {
		return errAgain
	}
	return errFresh
}

// releaseInto derives each held request of e, from e's steps when they
// are complete for it, and appends it to out. Caller holds mu.
func (a *Assembler) releaseInto(out ptrace.Traces, e *traceEntry, evicted bool) {
	if len(e.held) == 0 {
		return
	}
	var steps *derive.Steps
	for _, h := range e.held {
		if steps == nil && e.progress(h.expected).Complete {
			steps = e.toSteps()
		}
		a.releaseOne(out, e, steps, h, evicted)
	}
	a.totalHeld -= len(e.held)
	e.held = nil
}

// releaseOne derives the held request h, with steps (e's, sorted; nil when
// they were not needed yet) if e's steps are complete for it, and moves it
// to out. Caller holds mu.
func (a *Assembler) releaseOne(out ptrace.Traces, e *traceEntry, steps *derive.Steps, h heldSpan, evicted bool) {
	p := e.progress(h.expected)
	p.Evicted = p.Evicted || evicted
	if !p.Complete {
		steps = nil
	} else if steps == nil {
		steps = e.toSteps()
	}
	rs := h.td.ResourceSpans().At(0)
	ss := rs.ScopeSpans().At(0)
	a.release(ss.Spans().At(0), rs.Resource().Attributes(), derive.ScopeOf(rs, ss), steps, p)
	rs.MoveTo(out.ResourceSpans().AppendEmpty())
}

// emit sends released request spans downstream. They were acknowledged to
// their sender, so a retryable refusal must not lose them: a copy goes back
// to the released set (within MaxHeld) for a later batch or tick, after a
// pause that doubles while the refusals last. A permanent error, a full
// set, or any refusal at shutdown (final) gives them up, logged and counted
// by reason. The error is returned for shutdown to report.
func (a *Assembler) emit(ctx context.Context, td ptrace.Traces, final bool) error {
	n := td.SpanCount()
	if n == 0 {
		return nil
	}
	err := a.next.ConsumeTraces(ctx, td)
	a.mu.Lock()
	defer a.mu.Unlock()
	if err == nil {
		if a.backoff > 0 {
			a.logger.Info("held LLM request spans accepted downstream again", zap.Int("spans", n))
			a.backoff, a.retryAt = 0, time.Time{}
		}
		return nil
	}
	var reason Reason
	switch {
	case consumererror.IsPermanent(err):
		reason = EvictRefused
	case final:
		reason = EvictRefusedAtShutdown
	case a.released.SpanCount()+a.refused.SpanCount()+n > a.cfg.MaxHeld:
		reason = EvictRetryFull
	default:
		a.keepRefused(td, n, err)
		return err
	}
	a.tel.Evicted(reason, n)
	a.logger.Warn("giving up held LLM request spans refused downstream", zap.Error(err), zap.Int("spans", n),
		zap.Stringer("reason", reason))
	return err
}

// keepRefused keeps a copy of td, n spans a retryable error refused, for a
// later send (marked as a re-send), and sets the pause before it. The copy is needed: a fan-out
// downstream marks td read-only before handing it on, and a consumer may
// still hold it, so moving out of it panics ("invalid access to shared
// data"). Caller holds mu.
func (a *Assembler) keepRefused(td ptrace.Traces, n int, err error) {
	rss := td.ResourceSpans()
	dst := a.refused.ResourceSpans()
	dst.EnsureCapacity(dst.Len() + rss.Len())
	for i := range rss.Len() {
		rss.At(i).CopyTo(dst.AppendEmpty())
	}
	if a.backoff == 0 {
		a.backoff = a.tick()
		a.logger.Warn("held LLM request spans refused downstream; sending them again with a backoff",
			zap.Error(err), zap.Int("spans", n))
	} else {
		a.backoff = min(2*a.backoff, MaxRetryBackoff)
		a.logger.Debug("held LLM request spans refused downstream again", zap.Error(err), zap.Int("spans", n),
			zap.Duration("next_try_in", a.backoff))
	}
	a.retryAt = a.now().Add(a.backoff)
}
