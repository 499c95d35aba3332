// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

// Package callgrind reads the output of valgrind's callgrind tool (its
// documented text format) into what the collector-level instruction count
// needs: the program's total, each function's own (exclusive) count, and
// the inclusive count of each call from one function to another, from
// which the cost of the garbage collector is found.
package callgrind

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Edge is a call from Caller to Callee.
type Edge struct{ Caller, Callee string }

// Profile is one callgrind output file, counting the first event
// (instructions executed, Ir, unless --toggle options changed it).
type Profile struct {
	// Total is the program's count: the summary (or totals) line.
	Total int64
	// Self is each function's exclusive count, keyed by its name with any
	// recursion-level suffix ('2, '3…) removed.
	Self map[string]int64
	// Calls is the inclusive count of the calls along each edge, and
	// Count the number of those calls.
	Calls map[Edge]int64
	Count map[Edge]int64
}

// ReadFile parses the callgrind output file at path.
func ReadFile(path string) (*Profile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := Parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// parser holds the state of the format: the current function, the
// compressed names seen so far and whether the next cost line is a call's.
type parser struct {
	p        *Profile
	names    map[string]string // "(id)" → name, shared by fn= and cfn=
	fn, cfn  string
	calls    int64 // pending calls= count; -1: the next cost line is the function's own
	sawTotal bool
}

// Parse reads callgrind output. Cost lines after a calls= line are the
// call's inclusive count; every other cost line is the current function's
// own. Positions (line numbers or addresses, possibly relative) are
// skipped: only the first event after them is read.
func Parse(r io.Reader) (*Profile, error) {
	ps := &parser{
		p:     &Profile{Self: map[string]int64{}, Calls: map[Edge]int64{}, Count: map[Edge]int64{}},
		names: map[string]string{},
		calls: -1,
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	n := 0
	for sc.Scan() {
		n++
		if err := ps.line(sc.Text()); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !ps.sawTotal {
		return nil, fmt.Errorf("no summary or totals line: not a complete callgrind output")
	}
	return ps.p, nil
}

func (ps *parser) line(s string) error {
	if s == "" || s[0] == '#' {
		return nil
	}
	if c := s[0]; c >= '0' && c <= '9' || c == '+' || c == '-' || c == '*' || c == '0' {
		return ps.cost(s)
	}
	key, val, ok := strings.Cut(s, "=")
	if !ok {
		return ps.header(s)
	}
	switch key {
	case "fn":
		ps.fn = ps.name(val)
		ps.calls = -1
	case "cfn":
		ps.cfn = ps.name(val)
	case "calls":
		f := strings.Fields(val)
		if len(f) == 0 {
			return fmt.Errorf("empty calls=")
		}
		c, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return fmt.Errorf("calls=%q: %w", val, err)
		}
		ps.calls = c
	case "ob", "fl", "fi", "fe", "cob", "cfi", "cfl", "jump", "jcnd":
		// Objects, files and jumps do not change whose cost a line is.
	default:
		return ps.header(s)
	}
	return nil
}

// header reads "summary:" and "totals:"; other headers (version, cmd,
// events, positions…) are not needed.
func (ps *parser) header(s string) error {
	key, val, ok := strings.Cut(s, ":")
	if !ok || (key != "summary" && key != "totals") {
		return nil
	}
	f := strings.Fields(val)
	if len(f) == 0 {
		return fmt.Errorf("empty %s", key)
	}
	v, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	if key == "summary" || !ps.sawTotal {
		ps.p.Total = v
	}
	ps.sawTotal = true
	return nil
}

// name resolves a compressed name: "(12) runtime.mallocgc" defines id 12,
// "(12)" refers to it.
func (ps *parser) name(v string) string {
	v = strings.TrimSpace(v)
	if strings.HasPrefix(v, "(") {
		if end := strings.IndexByte(v, ')'); end > 0 {
			id, rest := v[:end+1], strings.TrimSpace(v[end+1:])
			if rest == "" {
				return ps.names[id]
			}
			rest = plain(rest)
			ps.names[id] = rest
			return rest
		}
	}
	return plain(v)
}

// plain removes callgrind's recursion-level suffix ("f'2").
func plain(name string) string {
	if i := strings.LastIndexByte(name, '\''); i > 0 {
		if _, err := strconv.Atoi(name[i+1:]); err == nil {
			return name[:i]
		}
	}
	return name
}

func (ps *parser) cost(s string) error {
	f := strings.Fields(s)
	if len(f) < 2 {
		// A position without costs: nothing counted.
		ps.calls = -1
		return nil
	}
	v, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return fmt.Errorf("cost %q: %w", s, err)
	}
	if ps.calls >= 0 {
		e := Edge{ps.fn, ps.cfn}
		ps.p.Calls[e] += v
		ps.p.Count[e] += ps.calls
		ps.calls = -1
		return nil
	}
	ps.p.Self[ps.fn] += v
	return nil
}

// Inclusive is the function's own count and that of every call it makes
// to another function.
func (p *Profile) Inclusive(name string) int64 {
	return p.Within(func(f string) bool { return f == name })
}

// Within is the count spent inside a set of functions: the own count of
// every function in the set, plus every call made from a function in the
// set to one outside it (inclusive), so that a call inside the set is not
// counted twice. It is exact when no call leaves the set and comes back
// into it. For Go programs, callgrind's inclusive counts are only as good
// as its view of the stack: it follows calls by the stack pointer, and a
// goroutine switch looks like a call.
func (p *Profile) Within(in func(string) bool) int64 {
	var sum int64
	for f, v := range p.Self {
		if in(f) {
			sum += v
		}
	}
	for e, v := range p.Calls {
		if in(e.Caller) && !in(e.Callee) && e.Caller != e.Callee {
			sum += v
		}
	}
	return sum
}
