// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

// Package render writes a report (schema.Report) as text, Markdown, JSON or
// HTML. The text, Markdown and HTML reports are the sections below, in
// their order; JSON is the schema itself.
package render

import (
	"bytes"
	"io"

	"github.com/llmslo/llmslo/tools/internal/report/schema"
)

// Width is the widest line of the text report.
const Width = 100

// A section is one part of the report, one file each (section_*.go). doc
// adds it to the text report (text set) or the Markdown one; html writes
// it into the HTML page, or is nil when the page shows it only in its
// closing "All numbers" (the text report).
type section struct {
	doc  func(d *doc, r *schema.Report, text bool)
	html func(b *bytes.Buffer, r *schema.Report) error
}

// sections are the report's parts in report order: every renderer but JSON
// walks this list, so a new section is a file and an entry here.
var sections = []section{
	{doc: summaryDoc, html: summaryHTML},
	{doc: slosDoc, html: slosHTML},
	{doc: attributionDoc, html: attributionHTML},
	{doc: capacityDoc, html: capacityHTML},
	{doc: latencyDoc, html: latencyHTML},
	{doc: definitionsDoc, html: definitionsHTML},
	{doc: slowestDoc},
}

// WriteText writes the terminal report: no line wider than Width.
func WriteText(w io.Writer, r *schema.Report) error { return buildDoc(r, true).text(w) }

// WriteMarkdown writes the report as Markdown.
func WriteMarkdown(w io.Writer, r *schema.Report) error { return buildDoc(r, false).markdown(w) }

func buildDoc(r *schema.Report, text bool) *doc {
	d := &doc{}
	for _, s := range sections {
		s.doc(d, r, text)
	}
	return d
}
