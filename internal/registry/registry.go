// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

// Package registry lets an llm_slo connector learn, inside one collector
// process, how the llm_slo processors in front of it are configured: the
// attribute prefix they write under and the SLO names they judge. It is how
// the connector needs no copy of the processor's configuration, its SLO
// thresholds included.
//
// A processor registers when its factory creates it (every component of a
// pipeline is created before any is started, so a connector's Start sees
// every processor of its collector) and unregisters on Shutdown, so a
// collector that reloads its configuration never sees a stale entry.
package registry

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"
)

// Processor is what one llm_slo processor tells the connectors.
type Processor struct {
	// ID is the processor's component ID ("llm_slo", "llm_slo/edge").
	ID string
	// Prefix is its attribute_prefix.
	Prefix string
	// SLOs are the names of the SLOs it judges, in configuration order.
	SLOs []string
	// Definitions, when set, say what each SLO of SLOs is (in the same
	// order), in a form that is equal for equal definitions: two processors
	// of one collector that define one SLO name differently would merge
	// their verdicts into one series, since the metrics tell SLOs apart by
	// name only.
	Definitions []string
	// ExcludeUnknown names the SLOs of SLOs whose unknown verdicts are left
	// out of the goodput ratio (unknown_verdicts: exclude).
	ExcludeUnknown []string
	// Thresholds, when set, are each SLO's configured thresholds (in the
	// order of SLOs), by constraint name (ttft, tpot, ...): the value a
	// request is judged against when it asks for no threshold of its own.
	// A constraint the SLO does not bound with a configured value is
	// absent. A connector's pressure gauge takes its thresholds from here.
	Thresholds []map[string]time.Duration
}

// clone copies p deeply, without Definitions unless withDefinitions.
func (p *Processor) clone(withDefinitions bool) *Processor {
	e := &Processor{ID: p.ID, Prefix: p.Prefix, SLOs: slices.Clone(p.SLOs), ExcludeUnknown: slices.Clone(p.ExcludeUnknown)}
	if withDefinitions {
		e.Definitions = slices.Clone(p.Definitions)
	}
	if p.Thresholds != nil {
		e.Thresholds = make([]map[string]time.Duration, len(p.Thresholds))
		for i, m := range p.Thresholds {
			e.Thresholds[i] = maps.Clone(m)
		}
	}
	return e
}

var (
	mu      sync.Mutex
	entries = map[*Processor]struct{}{}
)

// Register records p until the returned function is called; calling that
// function more than once is safe.
func Register(p Processor) (unregister func()) {
	e := p.clone(false)
	mu.Lock()
	entries[e] = struct{}{}
	mu.Unlock()
	return func() {
		mu.Lock()
		delete(entries, e)
		mu.Unlock()
	}
}

// RegisterUnique is Register, refused when a processor already registered
// defines one of p's SLO names differently: the error names the SLO and
// both processors.
func RegisterUnique(p Processor) (unregister func(), err error) {
	mu.Lock()
	defer mu.Unlock()
	for e := range entries {
		if err := conflict(e, &p); err != nil {
			return nil, err
		}
	}
	e := p.clone(true)
	entries[e] = struct{}{}
	return func() {
		mu.Lock()
		delete(entries, e)
		mu.Unlock()
	}, nil
}

// conflict reports an SLO name that a and b define differently.
func conflict(a, b *Processor) error {
	if len(a.Definitions) != len(a.SLOs) || len(b.Definitions) != len(b.SLOs) {
		return nil
	}
	for i, name := range b.SLOs {
		j := slices.Index(a.SLOs, name)
		if j >= 0 && a.Definitions[j] != b.Definitions[i] {
			return fmt.Errorf("SLO %q is defined differently by %s and %s: their verdicts would merge into one series (the metrics tell SLOs apart by name only); give one of them another name, or the same definition", name, a.ID, b.ID)
		}
	}
	return nil
}

// Processors returns a copy of every registered processor, sorted by ID,
// without Definitions (kept for RegisterUnique's check only).
func Processors() []Processor {
	mu.Lock()
	out := make([]Processor, 0, len(entries))
	for e := range entries {
		out = append(out, *e.clone(false))
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
