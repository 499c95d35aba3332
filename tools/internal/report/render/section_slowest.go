// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package render

import (
	"github.com/llmslo/llmslo/tools/internal/report/schema"
)

// The slowest requests per metric, with their trace and span IDs to look
// them up; the HTML page shows them in its text report.

func slowestDoc(d *doc, r *schema.Report, text bool) {
	d.h("Slowest requests")
	sw := &table{head: []string{"metric", "ms", "trace id", "span id", "group"}, right: []bool{false, true, false, false, false}}
	limit := 5
	if !text {
		limit = 10
	}
	for _, id := range schema.MetricIDs {
		label := id
		if id == "itl" {
			label = "itl max"
		}
		for i, s := range r.Slowest[id] {
			if i == limit {
				break
			}
			sw.rows = append(sw.rows, []string{label, ms(s.Value), s.TraceID, s.SpanID, truncate(r.GroupName(s.Group), 20)})
			label = ""
		}
	}
	d.t(sw)
}
