// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/llmslo/llmslo/internal/contract"
	"github.com/llmslo/llmslo/internal/registry"
)

// source is what the connector reads: the processor's keys and the SLO
// names it counts. It comes from the llm_slo processors registered in this
// collector, so the connector needs no copy of their configuration.
type source struct {
	keys  contract.Keys
	names *sloNames
	// processors are the IDs of the processors it follows; empty when none
	// is registered (a second-tier collector reading an earlier tier's
	// attributes).
	processors []string
}

// maxLearnedSLONames bounds the SLO names learned from spans when no
// processor is registered: beyond it, verdicts under new names are ignored
// and counted.
const maxLearnedSLONames = 64

// resolveSource picks the prefix and SLO names from the registered
// processors: with none, the configured prefix (or the default) and names
// learned from the spans; with some, their prefix, which attribute_prefix
// (if set) must equal, and the union of their SLO names.
func resolveSource(configured string, procs []registry.Processor) (*source, error) {
	if len(procs) == 0 {
		prefix := configured
		if prefix == "" {
			prefix = contract.DefaultPrefix
		}
		return &source{keys: contract.NewKeys(prefix), names: newLearnedNames(maxLearnedSLONames)}, nil
	}
	var prefixes []string
	for _, p := range procs {
		if !slices.Contains(prefixes, p.Prefix) {
			prefixes = append(prefixes, p.Prefix)
		}
	}
	prefix := configured
	switch {
	case prefix != "" && !slices.Contains(prefixes, prefix):
		return nil, fmt.Errorf("attribute_prefix: %q, but the llm_slo processors of this collector write under %s: "+
			"remove attribute_prefix (the connector follows the processor) or set it to one of theirs", prefix, describe(procs))
	case prefix == "" && len(prefixes) > 1:
		return nil, fmt.Errorf("the llm_slo processors of this collector write under different prefixes (%s): "+
			"set attribute_prefix to the one this connector reads", describe(procs))
	case prefix == "":
		prefix = prefixes[0]
	}
	src := &source{keys: contract.NewKeys(prefix)}
	var names, exclude []string
	for _, p := range procs {
		if p.Prefix != prefix {
			continue
		}
		src.processors = append(src.processors, p.ID)
		for _, n := range p.SLOs {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
		exclude = append(exclude, p.ExcludeUnknown...)
	}
	src.names = newFixedNames(names)
	src.names.setExclude(exclude)
	return src, nil
}

func describe(procs []registry.Processor) string {
	parts := make([]string, len(procs))
	for i, p := range procs {
		parts[i] = fmt.Sprintf("%q (%s)", p.Prefix, p.ID)
	}
	return strings.Join(parts, ", ")
}

// sloNames maps an SLO name to its index in every series' SLO counters. A
// fixed set (the processors' configuration) never changes; a learned set
// admits names matching the processor's SLO-name rule until it is full.
// Lookups read an immutable map through an atomic pointer: no lock on the
// hot path.
type sloNames struct {
	learn int // 0: fixed
	// exclude[i]: the SLO of index i leaves unknown verdicts out of its
	// goodput (unknown_verdicts: exclude). Set once, for a fixed set only:
	// learned names have no configuration to say so, and count them as bad.
	exclude []bool
	m       atomic.Pointer[map[string]int]
	list    atomic.Pointer[[]string]
	mu      sync.Mutex // serializes learning
}

func newFixedNames(names []string) *sloNames {
	n := &sloNames{}
	n.store(names)
	return n
}

// setExclude marks the SLOs named in names as excluding unknown verdicts;
// it runs before the set is shared.
func (n *sloNames) setExclude(names []string) {
	list := *n.list.Load()
	n.exclude = make([]bool, len(list))
	for i, name := range list {
		n.exclude[i] = slices.Contains(names, name)
	}
}

// excludesUnknown reports whether the SLO of index i leaves unknown
// verdicts out of its goodput.
func (n *sloNames) excludesUnknown(i int) bool { return i < len(n.exclude) && n.exclude[i] }

func newLearnedNames(limit int) *sloNames {
	n := &sloNames{learn: limit}
	n.store(nil)
	return n
}

func (n *sloNames) store(names []string) {
	m := make(map[string]int, len(names))
	for i, name := range names {
		m[name] = i
	}
	n.m.Store(&m)
	n.list.Store(&names)
}

// sloNameRule is the processor's rule for SLO names (they become attribute
// keys); a learned name must follow it, which also keeps it valid UTF-8.
var sloNameRule = regexp.MustCompile(`^[a-z][a-z0-9_]{0,62}$`)

// index returns name's index, learning it when the set learns and has
// room; false when the name is not counted.
func (n *sloNames) index(name string) (int, bool) {
	if i, ok := n.lookup(name); ok {
		return i, true
	}
	if n.learn == 0 || !sloNameRule.MatchString(name) {
		return 0, false
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	list := *n.list.Load()
	if i, ok := (*n.m.Load())[name]; ok {
		return i, true
	}
	if len(list) >= n.learn {
		return 0, false
	}
	n.store(append(slices.Clip(list), strings.Clone(name)))
	return len(list), true
}

// lookup finds name without learning: a few names are compared in turn
// (cheaper than hashing the key), more are looked up in the map.
func (n *sloNames) lookup(name string) (int, bool) {
	if list := *n.list.Load(); len(list) <= 8 {
		for i, x := range list {
			if x == name {
				return i, true
			}
		}
		return 0, false
	}
	i, ok := (*n.m.Load())[name]
	return i, ok
}

// name is the name of index i; false when there is none (counters made
// before Start replaced the names, which only a test does).
func (n *sloNames) name(i int) (string, bool) {
	list := *n.list.Load()
	if i >= len(list) {
		return "", false
	}
	return list[i], true
}
