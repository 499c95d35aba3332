// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package registry

import (
	"testing"
	"time"
)

func TestRegisterUnregister(t *testing.T) {
	slos := []string{"chat"}
	un1 := Register(Processor{ID: "llm_slo/b", Prefix: "llm.", SLOs: slos})
	un2 := Register(Processor{ID: "llm_slo/a", Prefix: "x.", SLOs: []string{"batch"}})
	slos[0] = "changed" // the registry keeps its own copy

	got := Processors()
	if len(got) != 2 || got[0].ID != "llm_slo/a" || got[1].ID != "llm_slo/b" || got[1].SLOs[0] != "chat" {
		t.Fatalf("Processors() = %+v", got)
	}
	un1()
	un1() // a second call is harmless
	if got := Processors(); len(got) != 1 || got[0].Prefix != "x." {
		t.Fatalf("after unregister: %+v", got)
	}
	un2()
	if got := Processors(); len(got) != 0 {
		t.Fatalf("after both: %+v", got)
	}
}

// TestThresholdsCopied: the thresholds are the registry's own copy, in
// and out.
func TestThresholdsCopied(t *testing.T) {
	in := []map[string]time.Duration{{"ttft": time.Second}}
	un := Register(Processor{ID: "llm_slo", Prefix: "llm.", SLOs: []string{"chat"}, Thresholds: in})
	defer un()
	in[0]["ttft"] = time.Hour
	got := Processors()
	if len(got) != 1 || got[0].Thresholds[0]["ttft"] != time.Second {
		t.Fatalf("Processors() = %+v", got)
	}
	got[0].Thresholds[0]["ttft"] = time.Minute
	if again := Processors(); again[0].Thresholds[0]["ttft"] != time.Second {
		t.Fatalf("a caller changed the registry: %+v", again)
	}
}
