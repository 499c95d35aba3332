// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package callgrind

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// testdata/tiny.callgrind is a small profile in callgrind's format (its
// inclusive and exclusive counts agree with callgrind_annotate's): compressed
// names, relative positions, a recursion level and a mark assist under
// mallocgc.
func TestParseTiny(t *testing.T) {
	p, err := ReadFile("testdata/tiny.callgrind")
	require.NoError(t, err)
	require.Equal(t, int64(1400), p.Total)
	var self int64
	for _, v := range p.Self {
		self += v
	}
	require.Equal(t, p.Total, self, "the own counts add up to the total")
	tests := []struct {
		name string
		got  int64
		want int64
	}{
		{"gcDrain's own, over a relative position and a repeated line", p.Self["runtime.gcDrain"], 305},
		{"walk's own with its recursion level merged", p.Self["github.com/llmslo/llmslo.(*processor).walk"], 250},
		{"a call's inclusive count", p.Calls[Edge{"main.work", "runtime.mallocgc"}], 190},
		{"a compressed callee name", p.Calls[Edge{"runtime.gcAssistAlloc", "runtime.gcDrain"}], 75},
		{"a call's count", p.Count[Edge{"main.work", "runtime.memmove"}], 9},
		{"main.work inclusive", p.Inclusive("main.work"), 1090},
		{"the recursive walk inclusive, counted once", p.Inclusive("github.com/llmslo/llmslo.(*processor).walk"), 250},
		{"a set's inclusive count: mark worker and assist", p.Within(func(f string) bool {
			return f == "runtime.gcBgMarkWorker" || f == "runtime.gcAssistAlloc"
		}), 420},
		{"a set's inclusive count, a call inside it counted once", p.Within(func(f string) bool {
			return f == "runtime.gcAssistAlloc" || f == "runtime.gcDrain"
		}), 360},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { require.Equal(t, tt.want, tt.got) })
	}
	require.Equal(t, map[string]int64{Project: 250, GC: 400, Marshal: 60, Alloc: 70, PData: 90, Other: 530}, p.ByCategory())
}

func TestParseErrors(t *testing.T) {
	for _, tt := range []struct{ name, in, err string }{
		{"no totals", "events: Ir\nfn=(1) f\n0 5\n", "no summary or totals"},
		{"bad cost", "events: Ir\nfn=(1) f\n0 x\nsummary: 5\n", "line 3"},
		{"bad calls", "events: Ir\nfn=(1) f\ncfn=(2) g\ncalls=x 0\n", "calls="},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tt.in))
			require.ErrorContains(t, err, tt.err)
		})
	}
}

func TestCategory(t *testing.T) {
	for fn, want := range map[string]string{
		"github.com/llmslo/llmslo/llmsloconnector.(*connector).scan": Project,
		"runtime.gcBgMarkWorker":                                     GC,
		"runtime.scanobject":                                         GC,
		"runtime.(*gcWork).tryGetFast":                               GC,
		"runtime.(*mspan).sweep":                                     GC,
		"runtime.mallocgc":                                           Alloc,
		"runtime.(*mcache).nextFree":                                 Alloc,
		"runtime.growslice":                                          Alloc,
		"go.opentelemetry.io/collector/pdata/internal.(*KeyValue).MarshalProto":                    Marshal,
		"go.opentelemetry.io/collector/pdata/internal.(*AnyValue).SizeProto":                       Marshal,
		"go.opentelemetry.io/collector/pdata/pcommon.Map.PutBool":                                  PData,
		"go.opentelemetry.io/collector/pdata/internal.(*ExportTraceServiceRequest).UnmarshalProto": PData,
		"runtime.memmove":   Other,
		"runtime.mapaccess": Other,
	} {
		require.Equal(t, want, Category(fn), fn)
	}
}
