package derive

import (
	"slices"
	"sort"
	"sync"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmslo/llmslo/internal/preset"
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
}

func (o *outputEvents) reset() {
	o.times, o.counts = o.times[:0], o.counts[:0]
	o.firstToken, o.invalidCount = 0, NoReason
}

// collect gathers the output events of span. An event whose token count is 0
// carries no output (a role-only or usage-only chunk) and is skipped; an
// event with a bad count is kept as output of unknown size.
func (o *outputEvents) collect(span ptrace.Span, kindOf func(string) eventKind, tokenKey string) {
	o.reset()
	evs := span.Events()
	last, lastKind, cached := "", notOutput, false
	for i := 0; i < evs.Len(); i++ {
		e := evs.At(i)
		name := e.Name()
		if !cached || name != last {
			last, lastKind, cached = name, kindOf(name), true
		}
		ts := uint64(e.Timestamp())
		switch lastKind {
		case chunkEvent:
			count := int64(-1)
			if tokenKey != "" {
				if v, ok := e.Attributes().Get(tokenKey); ok {
					n, r := parseCount(v)
					switch {
					case r != NoReason:
						if o.invalidCount == NoReason {
							o.invalidCount = r
						}
					case n == 0:
						continue
					default:
						count = n
					}
				}
			}
			o.times = append(o.times, ts)
			o.counts = append(o.counts, count)
		case firstTokenEvent:
			if o.firstToken == 0 || ts < o.firstToken {
				o.firstToken = ts
			}
		}
	}
}

// outside reports whether any output event lies outside [start, end]: such
// timing cannot be trusted, and using the rest would shift TTFT silently.
func (o *outputEvents) outside(start, end uint64) bool {
	if o.firstToken != 0 && (o.firstToken < start || o.firstToken > end) {
		return true
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
	if !slices.IsSorted(o.times) {
		sort.Sort(byTime{o})
	}
	w := 0
	for r := range o.times {
		if w > 0 && o.times[r] == o.times[w-1] {
			continue
		}
		o.times[w], o.counts[w] = o.times[r], o.counts[r]
		w++
	}
	dropped := w < len(o.times)
	o.times, o.counts = o.times[:w], o.counts[:w]
	return dropped
}

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

func tokensOf(count int64) int64 {
	if count < 0 {
		return 1
	}
	return count
}

// tokens is the output token count the chunks add up to, a chunk of
// unknown size counting as one token.
func (o *outputEvents) tokens() int64 {
	var n int64
	for _, c := range o.counts {
		n += tokensOf(c)
	}
	return n
}

// itl returns the mean and max gap. Per chunk, the mean gap telescopes to
// (last - first) / (chunks - 1). Token-aware, each gap is spread over the
// tokens of the chunk that ends it, so the mean is (last - first) / (tokens
// after the first chunk) and the max is the largest per-token share.
func (o *outputEvents) itl(tokenAware bool) (mean, maxGap Value) {
	span := o.times[len(o.times)-1] - o.times[0]
	var denom int64
	var largest float64
	for i := 1; i < len(o.times); i++ {
		gap := float64(o.times[i] - o.times[i-1])
		k := int64(1)
		if tokenAware {
			k = tokensOf(o.counts[i])
		}
		denom += k
		largest = max(largest, gap/float64(k))
	}
	return known(float64(span) / float64(denom) / 1e9), known(largest / 1e9)
}

// gaps appends each inter-output gap in seconds to dst: one per chunk, or,
// token-aware, one per token (a chunk of k tokens adds k entries of gap/k).
func (o *outputEvents) gaps(tokenAware bool, dst []float64) []float64 {
	for i := 1; i < len(o.times); i++ {
		gap := nanos(o.times[i] - o.times[i-1])
		if !tokenAware {
			dst = append(dst, gap)
			continue
		}
		k := tokensOf(o.counts[i])
		for range k {
			dst = append(dst, gap/float64(k))
		}
	}
	return dst
}

// EventReader extracts inter-token gaps from a span's events with the same
// rules as the derivation, for consumers (the connector) that need every gap
// rather than their mean and max.
type EventReader struct {
	ev   preset.Events
	pool sync.Pool // of *outputEvents
}

// NewEventReader reads the chunk events named in ev.
func NewEventReader(ev preset.Events) *EventReader { return &EventReader{ev: ev} }

func (r *EventReader) kind(name string) eventKind {
	switch {
	case slices.Contains(r.ev.Chunk, name):
		return chunkEvent
	case slices.Contains(r.ev.FirstToken, name):
		return firstTokenEvent
	}
	return notOutput
}

// Gaps appends the span's inter-output gaps in seconds to dst and returns
// it. It appends nothing when the span has fewer than two output events or
// when its event timing is unusable (outside the span).
func (r *EventReader) Gaps(span ptrace.Span, tokenAware bool, dst []float64) []float64 {
	if span.Events().Len() < 2 {
		return dst
	}
	o, _ := r.pool.Get().(*outputEvents)
	if o == nil {
		o = &outputEvents{}
	}
	defer r.pool.Put(o)
	o.collect(span, r.kind, r.ev.TokenCount)
	start, end := uint64(span.StartTimestamp()), uint64(span.EndTimestamp())
	if start == 0 || end < start || o.outside(start, end) {
		return dst
	}
	o.dedupe()
	return o.gaps(tokenAware, dst)
}
