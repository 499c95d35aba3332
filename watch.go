// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloprocessor

import (
	"math/bits"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/llmslo/llmslo/internal/contract"
	"github.com/llmslo/llmslo/internal/slo"
)

// This file holds the processor's two warnings about SLOs that cannot work
// as configured: a constraint that a producer never lets be decided, and a
// selector that matches nothing. Each is logged once per processor.

// The warnings' messages, as the documentation quotes them.
const (
	msgUndecidable = "every request of this producer preset left this SLO constraint unknown for a minute: " +
		"the producer does not give the value, so the SLO cannot judge it"
	msgSelectorIdle = "this SLO's selector matched no request for 10 minutes while other SLOs of this processor did: " +
		"check the selector (a mistyped model, preset or attribute value?)"
)

// producersDoc is the documentation section that says what each producer
// emits and how to get what it leaves out.
const producersDoc = "https://github.com/llmslo/llmslo/blob/main/docs/producers.md#what-your-producer-gives"

const (
	undecidableWindow = time.Minute
	selectorIdleAfter = 10 * time.Minute
)

// unknownCell counts, for one SLO and one preset, the requests the SLO
// judged (those that did not fail: a failed request lists no unknowns) and,
// per constraint, how many of them left it unknown.
type unknownCell struct {
	judged  int64
	unknown [contract.NumConstraints]int64
}

// unknownTally is a batch's cells, indexed slo × presets + preset, and the
// indexes it touched, so that merging and clearing cost what the batch used.
type unknownTally struct {
	presets int
	cells   []unknownCell
	touched []int32
}

func newUnknownTally(slos, presets int) unknownTally {
	return unknownTally{presets: presets, cells: make([]unknownCell, slos*presets)}
}

// count adds SLO i's verdict on a request of preset p that did not fail.
func (t *unknownTally) count(i, p int, v *slo.Verdict) {
	c := i*t.presets + p
	cell := &t.cells[c]
	if cell.judged == 0 {
		t.touched = append(t.touched, int32(c))
	}
	cell.judged++
	for u := v.Unknown; u != 0; u &= u - 1 {
		cell.unknown[bits.TrailingZeros8(u)]++
	}
}

// reset clears the touched cells.
func (t *unknownTally) reset() {
	for _, c := range t.touched {
		t.cells[c] = unknownCell{}
	}
	t.touched = t.touched[:0]
}

// watch keeps the per-minute state of the warnings. Its size is fixed by
// the configuration (SLOs × presets); a batch takes its mutex once.
type watch struct {
	log     *zap.Logger
	now     func() time.Time
	slos    []string // names
	sels    []string // selectors, described
	presets []string

	mu sync.Mutex
	// first is the first batch's time, start the current window's.
	first, start time.Time
	window       unknownTally
	// logged has bit k set for a cell whose constraint k was logged.
	logged []uint8
	// matched is when each SLO last selected a request (zero: never).
	matched    []time.Time
	idleWarned []bool
}

func newWatch(log *zap.Logger, cfg *Config, presets []string) *watch {
	w := &watch{log: log, now: time.Now, presets: presets, window: newUnknownTally(len(cfg.SLOs), len(presets)),
		logged: make([]uint8, len(cfg.SLOs)*len(presets)), matched: make([]time.Time, len(cfg.SLOs)),
		idleWarned: make([]bool, len(cfg.SLOs))}
	for i := range cfg.SLOs {
		w.slos = append(w.slos, cfg.SLOs[i].Name)
		w.sels = append(w.sels, cfg.SLOs[i].Selector.Describe())
	}
	return w
}

// merge adds a batch's counts, closing the window first when a minute has
// passed since it began: a batch counts in the window it arrived in.
func (w *watch) merge(b *batchCounts) {
	if len(w.slos) == 0 {
		return
	}
	now := w.now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.first.IsZero() {
		w.first, w.start = now, now
	}
	if now.Sub(w.start) >= undecidableWindow {
		w.closeWindow()
		w.checkIdle(now)
		w.start = now
	}
	for _, c := range b.unknown.touched {
		dst, src := &w.window.cells[c], &b.unknown.cells[c]
		if dst.judged == 0 {
			w.window.touched = append(w.window.touched, c)
		}
		dst.judged += src.judged
		for k, n := range src.unknown {
			dst.unknown[k] += n
		}
	}
	for i, row := range b.verdicts {
		if row != [numOutcomes]int64{} {
			w.matched[i] = now
		}
	}
}

// closeWindow logs every SLO × constraint × preset whose requests of the
// window all left the constraint unknown, once, and clears the window.
func (w *watch) closeWindow() {
	names := slo.Names()
	for _, c := range w.window.touched {
		cell := &w.window.cells[c]
		for k, n := range cell.unknown {
			if n == 0 || n != cell.judged || w.logged[c]&(1<<k) != 0 {
				continue
			}
			w.logged[c] |= 1 << k
			i, p := int(c)/w.window.presets, int(c)%w.window.presets
			w.log.Warn(msgUndecidable, zap.String("slo", w.slos[i]), zap.String("constraint", names[k]),
				zap.String("preset", w.presets[p]), zap.String("see", producersDoc))
		}
	}
	w.window.reset()
}

// checkIdle logs, once, each SLO that selected nothing for selectorIdleAfter
// (since the first batch, if never) while another SLO selected requests.
func (w *watch) checkIdle(now time.Time) {
	for i := range w.slos {
		since := w.matched[i]
		if since.IsZero() {
			since = w.first
		}
		if w.idleWarned[i] || now.Sub(since) < selectorIdleAfter || !w.otherMatched(i, now) {
			continue
		}
		w.idleWarned[i] = true
		w.log.Warn(msgSelectorIdle, zap.String("slo", w.slos[i]), zap.String("selector", w.sels[i]),
			zap.Duration("idle", selectorIdleAfter))
	}
}

// otherMatched reports whether an SLO other than i selected a request in
// the last selectorIdleAfter.
func (w *watch) otherMatched(i int, now time.Time) bool {
	for j, t := range w.matched {
		if j != i && !t.IsZero() && now.Sub(t) < selectorIdleAfter {
			return true
		}
	}
	return false
}
