// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"flag"
	"fmt"
	"strings"
	"time"
)

// IncidentFlags are the -incident-* flags of the commands that drive the
// generator (llmloadgen): Register them, then Incident.
type IncidentFlags struct {
	model, kind              string
	at                       time.Duration
	ttftFactor, promptFactor float64
	queueDelay, networkDelay time.Duration
}

// kindFlags are the flags that belong to one incident kind.
var kindFlags = map[string]IncidentKind{
	"incident-ttft-factor":   IncidentTTFT,
	"incident-prompt-factor": IncidentLongPrompt,
	"incident-queue-delay":   IncidentQueue,
	"incident-network-delay": IncidentNetwork,
}

// Register adds the flags to fs.
func (f *IncidentFlags) Register(fs *flag.FlagSet) {
	fs.StringVar(&f.model, "incident-model", "", "inject an incident into this model's requests (see -incident-kind)")
	fs.StringVar(&f.kind, "incident-kind", string(IncidentTTFT), "what the incident does: ttft, queue, long_prompt, network")
	fs.DurationVar(&f.at, "incident-at", 0, "the incident starts this long after the first request")
	fs.Float64Var(&f.ttftFactor, "incident-ttft-factor", 10, "ttft: TTFT multiplier")
	fs.Float64Var(&f.promptFactor, "incident-prompt-factor", 8, "long_prompt: input-token multiplier")
	fs.DurationVar(&f.queueDelay, "incident-queue-delay", time.Second, "queue: queue time added to every request")
	fs.DurationVar(&f.networkDelay, "incident-network-delay", 300*time.Millisecond, "network: delay added between client and engine")
}

// Incident returns the incident the flags parsed into fs describe, nil
// without -incident-model; a flag that does not apply is an error.
func (f *IncidentFlags) Incident(fs *flag.FlagSet) (*Incident, error) {
	var given []string
	fs.Visit(func(fl *flag.Flag) {
		if strings.HasPrefix(fl.Name, "incident-") && fl.Name != "incident-model" {
			given = append(given, fl.Name)
		}
	})
	if f.model == "" {
		if len(given) > 0 {
			return nil, fmt.Errorf("-%s needs -incident-model, the model whose requests the incident changes", given[0])
		}
		return nil, nil
	}
	kind, err := ParseIncidentKind(f.kind)
	if err != nil {
		return nil, fmt.Errorf("-incident-kind: %w", err)
	}
	for _, name := range given {
		if k, ok := kindFlags[name]; ok && k != kind {
			return nil, fmt.Errorf("-%s applies to -incident-kind %s, not %s", name, k, kind)
		}
	}
	if f.at < 0 {
		return nil, fmt.Errorf("-incident-at must not be negative, got %v", f.at)
	}
	inc := &Incident{Model: f.model, After: f.at, Kind: kind}
	name := flagOf(kind)
	switch kind {
	case IncidentQueue, IncidentNetwork:
		inc.Delay = f.queueDelay
		if kind == IncidentNetwork {
			inc.Delay = f.networkDelay
		}
		if inc.Delay <= 0 {
			return nil, fmt.Errorf("-%s must be positive, got %v", name, inc.Delay)
		}
	default:
		inc.Factor = f.ttftFactor
		if kind == IncidentLongPrompt {
			inc.Factor = f.promptFactor
		}
		if !(inc.Factor > 0) {
			return nil, fmt.Errorf("-%s must be positive, got %v", name, inc.Factor)
		}
	}
	return inc, nil
}

// flagOf is the flag that sets kind's factor or delay.
func flagOf(kind IncidentKind) string {
	for name, k := range kindFlags {
		if k == kind {
			return name
		}
	}
	return ""
}
