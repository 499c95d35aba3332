// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package slorules

import (
	"time"
)

// Window is one multi-window burn-rate condition: it fires when both the
// long and the short window burn the error budget at Factor times the
// rate that would spend it exactly over the period.
type Window struct {
	// BudgetPercent is the share of the period's error budget that a burn
	// at Factor spends in Long.
	BudgetPercent float64
	Short, Long   time.Duration
}

// Factor is the burn rate that spends BudgetPercent of the budget in Long:
// BudgetPercent × period / 100 / Long, computed as Sloth computes it.
func (w Window) Factor(period time.Duration) float64 {
	return w.BudgetPercent * period.Hours() / 100 / w.Long.Hours()
}

// Alert is the pair of conditions of one severity (quick, then slow).
type Alert struct {
	Severity    string // "page" or "ticket"
	Quick, Slow Window
}

// Windows are the Google SRE workbook's windows, as Sloth's
// google-30d.yaml and google-28d.yaml give them; the factors follow from
// the period (14.4, 6, 3, 1 for 30 days).
var Windows = [2]Alert{
	{Severity: "page", Quick: Window{2, 5 * time.Minute, time.Hour}, Slow: Window{5, 30 * time.Minute, 6 * time.Hour}},
	{Severity: "ticket", Quick: Window{10, 2 * time.Hour, 24 * time.Hour}, Slow: Window{10, 6 * time.Hour, 72 * time.Hour}},
}

// sliWindows are the windows of the SLI recording rules, shortest first:
// every window an alert reads (Sloth's order), then the period.
func sliWindows() []time.Duration {
	var out []time.Duration
	add := func(d time.Duration) {
		for _, x := range out {
			if x == d {
				return
			}
		}
		out = append(out, d)
	}
	for _, a := range Windows {
		add(a.Quick.Short)
		add(a.Quick.Long)
		add(a.Slow.Short)
		add(a.Slow.Long)
	}
	// Sloth's order: 5m 30m 1h 2h 6h 1d 3d.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}
