// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package derive

import (
	"slices"
	"sort"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

type eventKind uint8

const (
	notOutput eventKind = iota
	chunkEvent
	firstTokenEvent
)

// outputEvents are the output times of one span, in Unix ns, with each
// chunk's token count (-1 when the event does not say).
type outputEvents struct {
	times        []uint64
	counts       []int64
	firstToken   uint64 // earliest first-token-only event, 0 if none
	invalidCount Reason
	// unsorted: times may be out of order (a later time came first, or
	// they came from steps); repeated: two neighbours are equal. Producers
	// emit chunks in order, so outside and dedupe then look at the ends
	// only and copy nothing.
	unsorted, repeated bool
	// keepCounts: the chunks' token counts are needed (for N or for
	// token-aware ITL); without it counts stays empty, a store per event
	// spared. Their reading still decides which events are output.
	keepCounts bool
}

func (o *outputEvents) reset() {
	o.times, o.counts = o.times[:0], o.counts[:0]
	o.firstToken, o.invalidCount = 0, NoReason
	o.unsorted, o.repeated, o.keepCounts = false, false, true
}

// collect gathers the output events of span. An event whose token count is 0
// carries no output (a role-only or usage-only chunk) and is skipped; an
// event with a bad count is kept as output of unknown size. Events come in
// runs of one name (a stream's chunks): each run is classified once and
// read by a loop of its own, small enough to keep its state in registers.
// keepCounts says whether the chunks' token counts are stored.
func (o *outputEvents) collect(span ptrace.Span, kindOf func(string) eventKind, tokenKey string, keepCounts bool) {
	o.reset()
	o.keepCounts = keepCounts
	evs := span.Events()
	for i := 0; i < evs.Len(); {
		name := evs.At(i).Name()
		switch kindOf(name) {
		case chunkEvent:
			i = o.chunkRun(evs, i, name, tokenKey)
		case firstTokenEvent:
			i = o.firstTokenRun(evs, i, name)
		default:
			i = skipRun(evs, i, name)
		}
	}
}

// chunkRun reads the run of chunk events called name from index i and
// returns the index after it. The usual token count, a small positive
// integer, is read inline: Int is non-zero only for an integer value.
func (o *outputEvents) chunkRun(evs ptrace.SpanEventSlice, i int, name, tokenKey string) int {
	times, counts := o.times, o.counts
	for ; i < evs.Len(); i++ {
		e := evs.At(i)
		if e.Name() != name {
			break
		}
		count := int64(-1)
		if v, ok := e.Attributes().Get(tokenKey); ok && tokenKey != "" {
			if count = v.Int(); count <= 0 || count > MaxTokens {
				var output bool
				if count, output = o.parseChunkCount(v); !output {
					continue
				}
			}
		}
		ts := uint64(e.Timestamp())
		if n := len(times); n > 0 && ts <= times[n-1] {
			o.noteDisorder(ts, times[n-1])
		}
		times = append(times, ts)
		if o.keepCounts {
			counts = append(counts, count)
		}
	}
	o.times, o.counts = times, counts
	return i
}

// noteDisorder records a time at or before the previous one; out of line,
// as producers emit chunks in order.
func (o *outputEvents) noteDisorder(ts, last uint64) {
	o.unsorted = o.unsorted || ts < last
	o.repeated = o.repeated || ts == last
}

// firstTokenRun is chunkRun for first-token-only events: the earliest counts.
func (o *outputEvents) firstTokenRun(evs ptrace.SpanEventSlice, i int, name string) int {
	for ; i < evs.Len(); i++ {
		e := evs.At(i)
		if e.Name() != name {
			break
		}
		if ts := uint64(e.Timestamp()); o.firstToken == 0 || ts < o.firstToken {
			o.firstToken = ts
		}
	}
	return i
}

// skipRun returns the index after the run of events called name from i.
func skipRun(evs ptrace.SpanEventSlice, i int, name string) int {
	for i < evs.Len() && evs.At(i).Name() == name {
		i++
	}
	return i
}

// parseChunkCount reads a chunk's token count that is not a small positive
// integer: -1 for a bad one (the reason kept in invalidCount), and false
// for a chunk that carries no output (0).
func (o *outputEvents) parseChunkCount(v pcommon.Value) (int64, bool) {
	n, r := parseCount(v)
	switch {
	case r != NoReason:
		if o.invalidCount == NoReason {
			o.invalidCount = r
		}
		return -1, true
	case n == 0:
		return 0, false
	}
	return n, true
}

// outside reports whether any output event lies outside [start, end]: such
// timing cannot be trusted, and using the rest would shift TTFT silently.
func (o *outputEvents) outside(start, end uint64) bool {
	if o.firstToken != 0 && (o.firstToken < start || o.firstToken > end) {
		return true
	}
	if n := len(o.times); n > 0 && !o.unsorted {
		return o.times[0] < start || o.times[n-1] > end
	}
	for _, ts := range o.times {
		if ts < start || ts > end {
			return true
		}
	}
	return false
}

// dedupe sorts the events by time (OTLP gives their list order no meaning)
// and drops events that repeat an earlier one's timestamp, reporting whether
// it dropped any.
func (o *outputEvents) dedupe() bool {
	kept := len(o.counts) == len(o.times)
	switch {
	case o.unsorted:
		switch {
		case slices.IsSorted(o.times):
		case kept:
			sort.Sort(byTime{o})
		default:
			slices.Sort(o.times)
		}
	case !o.repeated:
		return false
	}
	w := 0
	for r := range o.times {
		if w > 0 && o.times[r] == o.times[w-1] {
			continue
		}
		o.times[w] = o.times[r]
		if kept {
			o.counts[w] = o.counts[r]
		}
		w++
	}
	dropped := w < len(o.times)
	o.times = o.times[:w]
	if kept {
		o.counts = o.counts[:w]
	}
	return dropped
}

// byTime sorts times with their counts (dedupe uses it only when counts
// are kept).
type byTime struct{ o *outputEvents }

func (b byTime) Len() int           { return len(b.o.times) }
func (b byTime) Less(i, j int) bool { return b.o.times[i] < b.o.times[j] }
func (b byTime) Swap(i, j int) {
	b.o.times[i], b.o.times[j] = b.o.times[j], b.o.times[i]
	b.o.counts[i], b.o.counts[j] = b.o.counts[j], b.o.counts[i]
}

func (o *outputEvents) firstOutput() uint64 {
	switch {
	case len(o.times) == 0:
		return o.firstToken
	case o.firstToken != 0 && o.firstToken < o.times[0]:
		return o.firstToken
	default:
		return o.times[0]
	}
}

// addSteps takes the output times of the trace assembly's steps. A step
// count beyond MaxTokens (a counter that jumped) is refused: the step
// counts as one token and the span reports events:out_of_range.
func (o *outputEvents) addSteps(st *Steps) {
	o.times = append(o.times, st.Times...)
	o.unsorted = true // not checked: outside and dedupe look at every time
	for _, c := range st.Counts {
		if CheckTokens(c) == OutOfRange {
			if o.invalidCount == NoReason {
				o.invalidCount = OutOfRange
			}
			c = -1
		}
		o.counts = append(o.counts, c)
	}
}

func tokensOf(count int64) int64 {
	if count < 0 {
		return 1
	}
	return count
}

// tokens is the output token count the chunks add up to, a chunk of
// unknown size counting as one token. Each count is at most MaxTokens, so
// the sum cannot overflow; a sum beyond MaxTokens is refused (OutOfRange).
func (o *outputEvents) tokens() (int64, Reason) {
	var n int64
	for _, c := range o.counts {
		n += tokensOf(c)
	}
	if r := CheckTokens(n); r != NoReason {
		return 0, r
	}
	return n, NoReason
}

// itl sets the ITL mean and max of res and its gaps. Per chunk, each gap is
// one entry of weight 1 and the mean telescopes to (last - first) / (chunks
// - 1). Token-aware, the gap before a chunk of k tokens is one entry gap/k
// of weight k, never k copies (a chunk claiming 2^24 tokens costs one entry
// like any other); the mean is (last - first) / (tokens after the first
// chunk) and the max the largest gap/k. GapWeights is left empty when every
// weight is 1.
func (o *outputEvents) itl(tokenAware bool, res *Result) {
	if !tokenAware {
		o.itlPerChunk(res)
		return
	}
	gaps, weights := res.Gaps[:0], res.GapWeights[:0]
	var denom int64
	var largest float64
	weighted := false
	for i := 1; i < len(o.times); i++ {
		gap := o.times[i] - o.times[i-1]
		k := tokensOf(o.counts[i])
		weighted = weighted || k != 1
		denom += k
		largest = max(largest, float64(gap)/float64(k))
		gaps = append(gaps, nanos(gap)/float64(k))
		weights = append(weights, k)
	}
	if !weighted {
		weights = weights[:0]
	}
	span := o.times[len(o.times)-1] - o.times[0]
	res.ITLMean, res.ITLMax = known(float64(span)/float64(denom)/1e9), known(largest/1e9)
	res.Gaps, res.GapWeights = gaps, weights
}

// itlPerChunk is itl with every weight 1: the same values without a
// division per gap (x/1 is x exactly, and float64 keeps the order of the
// integer gaps, so the largest gap converts to the largest float). The gaps
// are stored by index into room made once, and converted from int64 (one
// instruction; every gap lies within the span, far below 2^63), so the
// loop has neither a growth check nor a bounds check.
func (o *outputEvents) itlPerChunk(res *Result) {
	n := len(o.times)
	gaps := slices.Grow(res.Gaps[:0], n-1)[:n-1]
	next := o.times[1:]
	next = next[:len(gaps)]
	prev, largest := o.times[0], uint64(0)
	for i := range gaps {
		gap := next[i] - prev
		prev = next[i]
		largest = max(largest, gap)
		gaps[i] = float64(int64(gap)) / 1e9
	}
	span := o.times[n-1] - o.times[0]
	res.ITLMean, res.ITLMax = known(float64(span)/float64(n-1)/1e9), known(float64(largest)/1e9)
	res.Gaps, res.GapWeights = gaps, res.GapWeights[:0]
}
