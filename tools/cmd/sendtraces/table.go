// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmslo/llmslo/internal/otlpio"
	"github.com/llmslo/llmslo/tools/internal/termtext"
)

const notLLM = "(not an LLM request: untouched)"

// printTable prints what the processor wrote on each span: one row per span
// when that fits in width columns (0: unlimited), else a narrower layout
// with the verdicts and errors on a line of their own under each span.
func printTable(out io.Writer, batches []ptrace.Traces, width int) {
	text := wideTable(batches)
	if !termtext.Fits(text, width) {
		text = narrowTable(batches, width)
	}
	fmt.Fprint(out, text)
}

func wideTable(batches []ptrace.Traces) string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "SERVICE\tSPAN\tSOURCE\tTTFT\tTPOT\tITL mean/max\tE2E\tN\tSLO VERDICTS\tERRORS")
	forSpans(batches, func(svc string, s ptrace.Span, a pcommon.Map, src string) {
		if src == "" {
			fmt.Fprintf(w, "%s\t%s\t%s\t\t\t\t\t\t\t\n", svc, s.Name(), notLLM)
			return
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s/%s\t%s\t%s\t%s\t%s\n", svc, s.Name(), src,
			ms(a, "llm.ttft"), ms(a, "llm.tpot"), ms(a, "llm.itl.mean"), ms(a, "llm.itl.max"), ms(a, "llm.e2e"),
			orDash(str(a, "llm.output_tokens")), verdicts(a), orDash(str(a, "llm.metrics.error")))
	})
	_ = w.Flush()
	return trimLines(b.String())
}

// trimLines drops the padding tabwriter leaves after the last cell of a
// row whose trailing cells are empty.
func trimLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

// narrowTable drops the unit from the numbers and the headers (all
// milliseconds, said once above the table), shortens long span names and
// moves the verdicts and errors under their span: the demo's samples fit
// 120 columns.
func narrowTable(batches []ptrace.Traces, width int) string {
	var rows strings.Builder
	w := tabwriter.NewWriter(&rows, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "SERVICE\tSPAN\tSOURCE\tTTFT\tTPOT\tITL mean/max\tE2E\tN")
	more := []string{""} // the line under each row; none under the header
	forSpans(batches, func(svc string, s ptrace.Span, a pcommon.Map, src string) {
		name := shorten(s.Name(), 24)
		if src == "" {
			fmt.Fprintf(w, "%s\t%s\t%s\t\t\t\t\t\n", svc, name, notLLM)
			more = append(more, "")
			return
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s/%s\t%s\t%s\n", svc, name, src,
			msNarrow(a, "llm.ttft"), msNarrow(a, "llm.tpot"), msNarrow(a, "llm.itl.mean"), msNarrow(a, "llm.itl.max"), msNarrow(a, "llm.e2e"),
			orDash(str(a, "llm.output_tokens")))
		line := "  -> " + verdicts(a)
		if e := str(a, "llm.metrics.error"); e != "" {
			line += "; errors: " + e
		}
		more = append(more, termtext.Wrap(line, width, "     "))
	})
	_ = w.Flush()
	// The lines under the rows are added after the columns are laid out:
	// inside the tabwriter, a line without cells would end every column.
	var b strings.Builder
	b.WriteString(termtext.Wrap("Times in milliseconds; under each span its SLO verdicts and errors.", width, "  ") + "\n")
	for i, row := range strings.Split(strings.TrimSuffix(rows.String(), "\n"), "\n") {
		b.WriteString(strings.TrimRight(row, " ") + "\n")
		if i < len(more) && more[i] != "" {
			b.WriteString(more[i] + "\n")
		}
	}
	return b.String()
}

// forSpans calls fn for every span, with src = "" for spans the processor
// did not claim.
func forSpans(batches []ptrace.Traces, fn func(svc string, s ptrace.Span, a pcommon.Map, src string)) {
	for _, td := range batches {
		otlpio.Spans(td, func(rs ptrace.ResourceSpans, s ptrace.Span) {
			a := s.Attributes()
			src := ""
			if v, ok := a.Get("llm.metrics.source"); ok {
				src = v.Str()
			}
			fn(str(rs.Resource().Attributes(), "service.name"), s, a, src)
		})
	}
}

func shorten(s string, n int) string {
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-3]) + "..."
}

// msNarrow prints a duration attribute in milliseconds with three
// significant digits at most.
func msNarrow(a pcommon.Map, key string) string {
	v, ok := a.Get(key)
	if !ok {
		return "-"
	}
	switch ms := v.Double() * 1000; {
	case ms >= 100:
		return fmt.Sprintf("%.0f", ms)
	case ms >= 10:
		return fmt.Sprintf("%.1f", ms)
	default:
		return fmt.Sprintf("%.2f", ms)
	}
}
