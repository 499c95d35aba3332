// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package render

import (
	"bytes"
	"html/template"
	"io"

	"github.com/llmslo/llmslo/tools/internal/report/schema"
)

// The HTML report is one file with inline SVG plots drawn by gonum/plot: no
// script, no stylesheet or font fetched from anywhere.

// WriteHTML writes the self-contained HTML report: every section's HTML,
// then the text report under "All numbers".
func WriteHTML(w io.Writer, r *schema.Report) error {
	var b bytes.Buffer
	if err := pageHead.Execute(&b, nil); err != nil {
		return err
	}
	for _, s := range sections {
		if s.html == nil {
			continue
		}
		if err := s.html(&b, r); err != nil {
			return err
		}
	}
	var txt bytes.Buffer
	if err := WriteText(&txt, r); err != nil {
		return err
	}
	if err := pageFoot.Execute(&b, txt.String()); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}

// htmlTemplate parses one section's template, with the cell formats of
// the text report.
func htmlTemplate(name, text string) *template.Template {
	return template.Must(template.New(name).Funcs(template.FuncMap{
		"pct": pct, "ms": ms, "rate": rate, "counts": sortedCounts,
	}).Parse(text))
}

var pageHead = htmlTemplate("head", `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>llmslo report</title>
<style>
body{font-family:`+pageFonts+`;margin:2em auto;padding:0 1.5em;max-width:1500px;color:#222}
h1{margin-bottom:0}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}
table{border-collapse:collapse;margin:.6em 0}td,th{padding:.2em .7em;border-bottom:1px solid #eee;text-align:right;white-space:nowrap}
td:first-child,th:first-child,td.l,th.l{text-align:left}table.narrow td,table.narrow th{padding:.2em .35em;font-size:13px}.sub{color:#666}svg{display:block;margin:.8em 0;width:100%;height:auto}svg text{font-family:`+pageFonts+` !important}
pre{background:#f6f6f6;padding:1em;overflow-x:auto;font-size:12px}
</style></head><body>
`)

var pageFoot = htmlTemplate("foot", `<h2>All numbers</h2>
<pre>{{.}}</pre>
</body></html>
`)
