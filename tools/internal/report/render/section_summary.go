// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package render

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/llmslo/llmslo/tools/internal/report/schema"
)

// The summary: what was read, how it is grouped, and whether groups
// overflowed.

func summaryDoc(d *doc, r *schema.Report, _ bool) {
	d.h("llmslo report")
	when := ""
	if r.Start != "" {
		when = fmt.Sprintf(" from %s to %s (%.1f s)", r.Start, r.End, float64(r.Duration))
	}
	d.p("%d LLM request spans (%d failed) of %d spans read%s. Grouped by %s. Processor settings: %s.",
		r.Requests, r.Failed, r.Spans, when, strings.Join(r.GroupBy, ", "), orDefault(r.Processor))
	if note := r.OverflowNote(); note != "" {
		d.p("%s", note)
	}
}

func summaryHTML(b *bytes.Buffer, r *schema.Report) error { return summaryTemplate.Execute(b, r) }

var summaryTemplate = htmlTemplate("summary", `<h1>llmslo report</h1>
<p class="sub">{{.Requests}} LLM request spans ({{.Failed}} failed) of {{.Spans}} spans{{if .Start}}, {{.Start}} to {{.End}}{{end}}; grouped by {{range $i, $d := .GroupBy}}{{if $i}}, {{end}}{{$d}}{{end}}.</p>
{{with .OverflowNote}}<p class="sub">{{.}}</p>{{end}}
`)
