// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package render

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// doc is the report as sections of paragraphs and tables, rendered as text
// or Markdown.
type doc struct {
	blocks []block
}

type block struct {
	heading string // a section heading
	para    string // a paragraph (wrapped in text)
	table   *table
}

type table struct {
	head  []string
	rows  [][]string
	right []bool // right-aligned columns
}

func (d *doc) h(s string) { d.blocks = append(d.blocks, block{heading: s}) }

func (d *doc) p(format string, a ...any) {
	d.blocks = append(d.blocks, block{para: fmt.Sprintf(format, a...)})
}

func (d *doc) t(t *table) { d.blocks = append(d.blocks, block{table: t}) }

func wrap(s string, width int, indent string) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		if line != "" && utf8.RuneCountInString(indent+line+" "+w) > width {
			lines = append(lines, indent+line)
			line = w
			continue
		}
		if line == "" {
			line = w
		} else {
			line += " " + w
		}
	}
	if line != "" {
		lines = append(lines, indent+line)
	}
	return lines
}

func (d *doc) text(w io.Writer) error {
	var b strings.Builder
	for i, bl := range d.blocks {
		switch {
		case bl.heading != "":
			if i > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(bl.heading + "\n")
			b.WriteString(strings.Repeat("=", min(Width, utf8.RuneCountInString(bl.heading))) + "\n")
		case bl.table != nil:
			bl.table.text(&b, "  ")
		default:
			for _, l := range wrap(bl.para, Width, "  ") {
				b.WriteString(l + "\n")
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (t *table) widths() []int {
	ws := make([]int, len(t.head))
	for _, row := range append([][]string{t.head}, t.rows...) {
		for i, c := range row {
			ws[i] = max(ws[i], utf8.RuneCountInString(c))
		}
	}
	return ws
}

func (t *table) text(b *strings.Builder, indent string) {
	ws := t.widths()
	line := func(row []string) {
		var l strings.Builder
		l.WriteString(indent)
		for i, c := range row {
			pad := strings.Repeat(" ", ws[i]-utf8.RuneCountInString(c))
			if i > 0 {
				l.WriteString("  ")
			}
			if t.right[i] {
				l.WriteString(pad + c)
			} else if i < len(row)-1 {
				l.WriteString(c + pad)
			} else {
				l.WriteString(c)
			}
		}
		b.WriteString(strings.TrimRight(l.String(), " ") + "\n")
	}
	line(t.head)
	sep := make([]string, len(ws))
	for i, w := range ws {
		sep[i] = strings.Repeat("-", w)
	}
	line(sep)
	for _, r := range t.rows {
		line(r)
	}
}

func (d *doc) markdown(w io.Writer) error {
	var b strings.Builder
	for _, bl := range d.blocks {
		switch {
		case bl.heading != "":
			if b.Len() == 0 {
				b.WriteString("# " + bl.heading + "\n\n")
			} else {
				b.WriteString("## " + bl.heading + "\n\n")
			}
		case bl.table != nil:
			t := bl.table
			b.WriteString("| " + strings.Join(mdEscape(t.head), " | ") + " |\n|")
			for _, r := range t.right {
				if r {
					b.WriteString("---:|")
				} else {
					b.WriteString("---|")
				}
			}
			b.WriteByte('\n')
			for _, row := range t.rows {
				b.WriteString("| " + strings.Join(mdEscape(row), " | ") + " |\n")
			}
			b.WriteByte('\n')
		default:
			b.WriteString(bl.para + "\n\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func mdEscape(cells []string) []string {
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = strings.ReplaceAll(c, "|", `\|`)
	}
	return out
}
