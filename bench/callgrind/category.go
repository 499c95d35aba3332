// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package callgrind

import (
	"regexp"
	"strings"
)

// The categories a function's own count is filed under, in the order a
// table lists them.
const (
	Project = "project code"
	GC      = "GC"
	Marshal = "protobuf encoding"
	Alloc   = "allocation"
	PData   = "pdata accessors"
	Other   = "other"
)

// Categories lists every category, in table order.
var Categories = []string{Project, GC, Marshal, Alloc, PData, Other}

// ProjectPrefix is the import path of the project's code.
const ProjectPrefix = "github.com/llmslo/llmslo"

// gcFunc matches the Go runtime's garbage-collector functions: marking
// (the background workers, assists, root and object scanning, write-barrier
// buffers), mark termination, sweeping and scavenging. Allocation's own
// path (mallocgc, span refills) is Alloc, even when it sweeps a span first.
var gcFunc = regexp.MustCompile(`^runtime\.(` +
	`gc[A-Z]\w*|\(\*gc\w+\)\.\w+|gcWriteBarrier\w*|wbBuf\w*|\(\*wbBuf\)\.\w+|` +
	`scan\w+|greyobject|shade|markroot\w*|markBits\w*|\(\*markBits\)\.\w+|findObject|` +
	`\(\*mspan\)\.(markBitsForIndex|markBitsForBase|sweep|objIndex|typePointersOf\w*|heapBitsSmallForAddr)|` +
	`\(\*sweepLocked\)\.\w+|\(\*sweepLocker\)\.\w+|sweepone|bgsweep|finishsweep_m|\(\*activeSweep\)\.\w+|` +
	`bgscavenge|\(\*scavengerState\)\.\w+|\(\*pageAlloc\)\.scav\w*|\(\*scavengeIndex\)\.\w+|` +
	`\(\*mheap\)\.reclaim\w*|\(\*mheap\)\.nextSpanForSweep|\(\*typePointers\)\.\w+|typePointers\.\w+|` +
	`bulkBarrierPreWrite\w*|\(\*gcWork\)\.\w+|putempty|getempty|trygetfull|handoff|` +
	`forEachP|stopTheWorld\w*|startTheWorld\w*|\(\*spanSet\)\.\w+|markrootSpans|` +
	`gcmarknewobject|setGCPhase|clearpools|freeStackSpans|\(\*mcache\)\.prepareForSweep|` +
	`\(\*gcControllerState\)\.\w+|\(\*gcCPULimiterState\)\.\w+|\(\*limiterEvent\)\.\w+|` +
	`tryDeferToSpanScan|spanSetScans|\(\*spanInlineMarkBits\)\.\w+|\(\*spanQueue\)\.\w+|\(\*spanSPMC\)\.\w+|` +
	`extractHeapBitsSmall|newMarkBits|newAllocBits|\(\*gcBits\w*\)\.\w+)$|^gcWriteBarrier\w*$`)

// allocFunc matches the Go runtime's allocation path.
var allocFunc = regexp.MustCompile(`^runtime\.(` +
	`mallocgc\w*|newobject|newarray|makeslice\w*|growslice|makemap\w*|rawstring\w*|rawbyteslice|` +
	`concatstring\w*|slicebytetostring|stringtoslicebyte|convT\w*|nextFreeFast|heapSetType\w*|` +
	`\(\*mcache\)\.\w+|\(\*mcentral\)\.\w+|\(\*mheap\)\.(alloc\w*|allocSpan|initSpan|freeSpan\w*)|` +
	`\(\*mspan\)\.(nextFreeIndex|refillAllocCache|init|initHeapBits|countAlloc)|` +
	`\(\*pageAlloc\)\.(alloc|allocRange|find|update)\w*|\(\*pageCache\)\.\w+|` +
	`memclrNoHeapPointers\w*|publicationBarrier|nextslicecap|roundupsize|` +
	`deductAssistCredit|deductSweepCredit|\(\*fixalloc\)\.\w+|persistentalloc\w*|` +
	`\(\*mspan\)\.writeHeapBits\w*|\(\*pallocBits\)\.\w+|\(\*pallocData\)\.\w+)$`)

// Category files a function under one of Categories by its name: the
// project's own code first, then the collector's protobuf encoding (the
// exporters' and the telemetry's sizes and marshalling; decoding is the
// receiver's, the same for every arm), the GC, allocation, pdata's
// accessors, and the rest.
func Category(fn string) string {
	switch {
	case strings.HasPrefix(fn, ProjectPrefix):
		return Project
	case strings.Contains(fn, "MarshalProto") || strings.Contains(fn, "SizeProto") ||
		strings.HasPrefix(fn, "go.opentelemetry.io/collector/pdata/internal/proto."):
		return Marshal
	case gcFunc.MatchString(fn):
		return GC
	case allocFunc.MatchString(fn):
		return Alloc
	case strings.HasPrefix(fn, "go.opentelemetry.io/collector/pdata/"):
		return PData
	}
	return Other
}

// ByCategory sums the profile's own counts by Category.
func (p *Profile) ByCategory() map[string]int64 {
	out := map[string]int64{}
	for f, v := range p.Self {
		out[Category(f)] += v
	}
	return out
}

// keys are the categories' names in a results line.
var keys = map[string]string{Project: "project", GC: "gc", Marshal: "marshal", Alloc: "alloc", PData: "pdata", Other: "other"}

// Key is the category's one-word name in a results line.
func Key(category string) string { return keys[category] }
