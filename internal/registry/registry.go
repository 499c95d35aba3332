// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

// Package registry lets an llm_slo connector learn, inside one collector
// process, how the llm_slo processors in front of it are configured: the
// attribute prefix they write under and the SLO names they judge. It is how
// the connector needs no copy of the processor's configuration.
//
// A processor registers when its factory creates it (every component of a
// pipeline is created before any is started, so a connector's Start sees
// every processor of its collector) and unregisters on Shutdown, so a
// collector that reloads its configuration never sees a stale entry.
package registry

import (
	"slices"
	"sync"
)

// Processor is what one llm_slo processor tells the connectors.
type Processor struct {
	// ID is the processor's component ID ("llm_slo", "llm_slo/edge").
	ID string
	// Prefix is its attribute_prefix.
	Prefix string
	// SLOs are the names of the SLOs it judges, in configuration order.
	SLOs []string
}

var (
	mu      sync.Mutex
	entries = map[*Processor]struct{}{}
)

// Register records p until the returned function is called; calling that
// function more than once is safe.
func Register(p Processor) (unregister func()) {
	e := &Processor{ID: p.ID, Prefix: p.Prefix, SLOs: slices.Clone(p.SLOs)}
	mu.Lock()
	entries[e] = struct{}{}
	mu.Unlock()
	return func() {
		mu.Lock()
		delete(entries, e)
		mu.Unlock()
	}
}

// Processors returns a copy of every registered processor, sorted by ID.
func Processors() []Processor {
	mu.Lock()
	out := make([]Processor, 0, len(entries))
	for e := range entries {
		out = append(out, Processor{ID: e.ID, Prefix: e.Prefix, SLOs: slices.Clone(e.SLOs)})
	}
	mu.Unlock()
	slices.SortFunc(out, func(a, b Processor) int {
		if a.ID < b.ID {
			return -1
		}
		if a.ID > b.ID {
			return 1
		}
		return 0
	})
	return out
}
