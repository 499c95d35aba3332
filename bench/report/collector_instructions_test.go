// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Two repetitions of the mix for the pair and both pass-throughs and
// signal_to_metrics: per span = (Ir(2N) − Ir(N)) / N, added = the arm's
// minus its own distribution's pass-through in the same repetition.
const irSample = `callgrind shape=mix arm=without_llmslo rep=1 spans=200 held_s=9.0 ir=1000000 project=0 gc=100000 gc_own=90000 marshal=5000 alloc=20000 pdata=30000 other=855000
callgrind shape=mix arm=without_llmslo rep=1 spans=100 held_s=9.0 ir=900000 project=0 gc=90000 gc_own=80000 marshal=4500 alloc=18000 pdata=27000 other=770500
callgrind shape=mix arm=with_llmslo rep=1 spans=200 held_s=9.0 ir=1300000 project=50000 gc=150000 gc_own=140000 marshal=9000 alloc=30000 pdata=40000 other=1031000
callgrind shape=mix arm=with_llmslo rep=1 spans=100 held_s=9.0 ir=1050000 project=25000 gc=110000 gc_own=100000 marshal=6500 alloc=24000 pdata=33000 other=861500
callgrind shape=mix arm=without_llmslo rep=2 spans=200 held_s=9.0 ir=1000000 project=0 gc=100000 gc_own=0 marshal=0 alloc=0 pdata=0 other=0
callgrind shape=mix arm=without_llmslo rep=2 spans=100 held_s=9.0 ir=900000 project=0 gc=90000 gc_own=0 marshal=0 alloc=0 pdata=0 other=0
callgrind shape=mix arm=with_llmslo rep=2 spans=200 held_s=9.0 ir=1400000 project=0 gc=200000 gc_own=0 marshal=0 alloc=0 pdata=0 other=0
callgrind shape=mix arm=with_llmslo rep=2 spans=100 held_s=9.0 ir=1100000 project=0 gc=130000 gc_own=0 marshal=0 alloc=0 pdata=0 other=0
callgrind shape=mix arm=peer_passthrough rep=1 spans=200 held_s=9.0 ir=800000 project=0 gc=0 gc_own=0 marshal=0 alloc=0 pdata=0 other=0
callgrind shape=mix arm=peer_passthrough rep=1 spans=100 held_s=9.0 ir=700000 project=0 gc=0 gc_own=0 marshal=0 alloc=0 pdata=0 other=0
callgrind shape=mix arm=peer_signal_to_metrics rep=1 spans=200 held_s=9.0 ir=1200000 project=0 gc=100000 gc_own=0 marshal=0 alloc=0 pdata=0 other=0
callgrind shape=mix arm=peer_signal_to_metrics rep=1 spans=100 held_s=9.0 ir=900000 project=0 gc=50000 gc_own=0 marshal=0 alloc=0 pdata=0 other=0
`

func TestCollectorInstructionsFigures(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "collector_instructions.txt"), []byte(irSample), 0o600); err != nil {
		t.Fatal(err)
	}
	runs, shapes, err := readIRRuns(filepath.Join(dir, "collector_instructions.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		got  []float64
		want []float64
	}{
		// (1,300,000 − 1,050,000) / 100 = 2,500; (1,400,000 − 1,100,000) / 100 = 3,000.
		{"the pair per span", runs.perSpan("mix", "with_llmslo", total), []float64{2500, 3000}},
		// Minus the pass-through's 1,000 in each repetition.
		{"the pair added", runs.addedPerRep("mix", "with_llmslo", total), []float64{1500, 2000}},
		// Outside the GC: (1,150,000 − 940,000) / 100 − (900,000 − 810,000) / 100.
		{"the pair added outside the GC", runs.addedPerRep("mix", "with_llmslo", outsideGC), []float64{1200, 1400}},
		{"the pair's added project code", runs.addedPerRep("mix", "with_llmslo", func(m map[string]float64) float64 { return m["project"] }), []float64{250, 0}},
		// A repetition without its pass-through gives nothing.
		{"signal_to_metrics added", runs.addedPerRep("mix", "peer_signal_to_metrics", total), []float64{2000}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if len(tt.got) != len(tt.want) {
				t.Fatalf("got %v, want %v", tt.got, tt.want)
			}
			for i := range tt.want {
				if tt.got[i] != tt.want[i] {
					t.Fatalf("got %v, want %v", tt.got, tt.want)
				}
			}
		})
	}
	if len(shapes) != 1 || shapes[0] != "mix" {
		t.Fatalf("shapes %v", shapes)
	}
	// The ratio's row: 1,750 / 2,000 = 0.88 on the means; 0.75 in repetition 1.
	ratios := pairRatios(runs, shapes)
	if !strings.Contains(ratios, "| mix (100, 2) | 1750 | 2000 | **0.88** (0.75) |") {
		t.Fatalf("ratio row missing in:\n%s", ratios)
	}
}
