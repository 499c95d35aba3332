// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloprocessor

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// docFiles are the hand-written documents whose links TestDocLinks checks.
func docFiles(t *testing.T) []string {
	files := []string{"README.md", "CONTRIBUTING.md", "CHANGELOG.md", filepath.Join("llmsloconnector", "README.md")}
	docs, err := filepath.Glob(filepath.Join("docs", "*.md"))
	require.NoError(t, err)
	require.NotEmpty(t, docs, "docs/*.md")
	return append(files, docs...)
}

var (
	// inlineLink is the target of an inline link or image, [text](target)
	// or [text](target "title"); the text may span lines.
	inlineLink = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	// codeSpan is an inline code span, whose brackets are not links.
	codeSpan = regexp.MustCompile("`[^`\n]*`")
	// headingLink is a link inside a heading: its text counts, not its target.
	headingLink = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	scheme      = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

// TestDocLinks: every relative link of the documents resolves to a file of
// the repository, and every #anchor to a heading of the document it names
// (GitHub's anchors: see headingSlug). Absolute URLs are not checked.
func TestDocLinks(t *testing.T) {
	anchors := map[string]map[string]bool{}
	anchorsOf := func(path string) map[string]bool {
		if a, ok := anchors[path]; ok {
			return a
		}
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		a := headingAnchors(string(raw))
		anchors[path] = a
		return a
	}
	checked := 0
	for _, doc := range docFiles(t) {
		raw, err := os.ReadFile(doc)
		require.NoError(t, err)
		for _, l := range markdownLinks(string(raw)) {
			if scheme.MatchString(l.target) {
				continue
			}
			checked++
			where := fmt.Sprintf("%s:%d: link %q", doc, l.line, l.target)
			path, anchor, _ := strings.Cut(l.target, "#")
			file := doc
			if path != "" {
				file = filepath.Join(filepath.Dir(doc), filepath.FromSlash(path))
				if !assert.False(t, strings.HasPrefix(filepath.ToSlash(file), "../"), "%s leaves the repository", where) {
					continue
				}
				if _, err := os.Stat(file); !assert.NoError(t, err, "%s: no such file", where) {
					continue
				}
			}
			if anchor != "" && strings.HasSuffix(file, ".md") {
				assert.True(t, anchorsOf(file)[anchor], "%s: %s has no heading with anchor #%s", where, file, anchor)
			}
		}
	}
	assert.Greater(t, checked, 20, "the documents should link to each other")
}

type mdLink struct {
	target string
	line   int
}

// markdownLinks returns the inline links of a document outside fenced code
// blocks and code spans, with the line each ends on.
func markdownLinks(doc string) []mdLink {
	var prose strings.Builder
	fence := ""
	for _, line := range strings.Split(doc, "\n") {
		if f := fenceOf(line); f != "" && (fence == "" || strings.HasPrefix(f, fence)) {
			if fence == "" {
				fence = f
			} else {
				fence = ""
			}
			line = ""
		} else if fence != "" {
			line = ""
		}
		// Blanking keeps the line numbers.
		prose.WriteString(codeSpan.ReplaceAllStringFunc(line, func(s string) string { return strings.Repeat(" ", len(s)) }) + "\n")
	}
	text := prose.String()
	var out []mdLink
	for _, m := range inlineLink.FindAllStringSubmatchIndex(text, -1) {
		out = append(out, mdLink{target: text[m[2]:m[3]], line: 1 + strings.Count(text[:m[1]], "\n")})
	}
	return out
}

// fenceOf returns the fence (``` or ~~~ and longer) a line opens or closes
// a code block with, or "".
func fenceOf(line string) string {
	s := strings.TrimLeft(line, " ")
	if len(line)-len(s) > 3 {
		return ""
	}
	for _, c := range []string{"`", "~"} {
		n := len(s) - len(strings.TrimLeft(s, c))
		if n >= 3 {
			return s[:n]
		}
	}
	return ""
}

// headingAnchors returns the anchors GitHub gives the ATX headings of a
// document outside code blocks: the slug of each, with -1, -2, ... after
// repeats.
func headingAnchors(doc string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	fence := ""
	for _, line := range strings.Split(doc, "\n") {
		if f := fenceOf(line); f != "" && (fence == "" || strings.HasPrefix(f, fence)) {
			if fence == "" {
				fence = f
			} else {
				fence = ""
			}
			continue
		}
		if fence != "" {
			continue
		}
		hashes := len(line) - len(strings.TrimLeft(line, "#"))
		if hashes < 1 || hashes > 6 || (len(line) > hashes && line[hashes] != ' ') {
			continue
		}
		s := headingSlug(line[hashes:])
		if n := seen[s]; n > 0 {
			out[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

// headingSlug is GitHub's anchor for a heading's text: link targets and
// closing hashes dropped, lowercase, every space a '-', and every other
// character but letters, digits, '-' and '_' removed.
func headingSlug(heading string) string {
	h := headingLink.ReplaceAllString(heading, "$1")
	h = strings.TrimSpace(strings.TrimRight(strings.TrimSpace(h), "#"))
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestHeadingSlug pins the slug rules on headings of these documents.
func TestHeadingSlug(t *testing.T) {
	for heading, want := range map[string]string{
		" Per-step timing from child spans (trace assembly)": "per-step-timing-from-child-spans-trace-assembly",
		" Double instrumentation: one call, two spans":       "double-instrumentation-one-call-two-spans",
		" The processor's own telemetry":                     "the-processors-own-telemetry",
		" Offline report: `llmslo report`":                   "offline-report-llmslo-report",
		" 1. Objectives in the config":                       "1-objectives-in-the-config",
		" llmslo — LLM latency SLOs":                         "llmslo--llm-latency-slos",
		" Metric names by convention version ##":             "metric-names-by-convention-version",
		" [The connector](llmsloconnector/README.md)":        "the-connector",
		" snake_case and P99.9":                              "snake_case-and-p999",
	} {
		assert.Equal(t, want, headingSlug(heading), heading)
	}
	assert.Equal(t, map[string]bool{"a": true, "a-1": true, "a-2": true}, headingAnchors("# A\n## A\n```\n# A\n```\n### A\n"))
}
