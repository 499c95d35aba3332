// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package registry

import (
	"testing"
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
