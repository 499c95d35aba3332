// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

// Package series is the connector's live series: the state of one
// dimension set (histograms, sliding windows, SLO counters, token
// counters, exemplars), the sharded store that finds and creates them under
// the cardinality limit, and the points a flush writes from them.
package series

import "github.com/llmslo/llmslo/internal/catalog"

// Hist is a distribution a series records.
type Hist uint8

const (
	HistTTFT Hist = iota
	HistTPOT
	HistITL
	HistDuration
	HistE2E
	HistQueue
	HistInputTokens
	HistOutputTokens
	NumHists
)

// carriesExemplars: the latency histograms do; token counts are not what an
// SRE chases from a spike to a trace.
func carriesExemplars(k Hist) bool { return k != HistInputTokens && k != HistOutputTokens }

// Layer is the llm.layer of a series: its metric names differ by layer.
type Layer uint8

const (
	LayerServer Layer = catalog.LayerServer
	LayerClient Layer = catalog.LayerClient
	NumLayers         = catalog.NumLayers
)

// LayerNames are the llm.layer values, by Layer.
var LayerNames = [NumLayers]string(catalog.Layers)

// Window is a distribution with windowed percentile gauges.
type Window uint8

const (
	WindowTTFT Window = iota
	WindowTPOT
	WindowITL
	WindowE2E
	NumWindows
)

// windowHist is the histogram each window shadows.
var windowHist = [NumWindows]Hist{HistTTFT, HistTPOT, HistITL, HistE2E}

// histWindow is the window that shadows each histogram; NumWindows: none.
var histWindow = func() [NumHists]Window {
	var w [NumHists]Window
	for k := range w {
		w[k] = NumWindows
	}
	for i, k := range windowHist {
		w[k] = Window(i)
	}
	return w
}()

// Usage is a token counter of the metric names that have them.
type Usage uint8

const (
	UsageInput Usage = iota
	UsageOutput
	UsageCacheRead
	UsageCacheWrite
	UsageReasoning
	NumUsage
)
