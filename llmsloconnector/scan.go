// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
	"math"
	"slices"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/llmslo/llmslo/internal/contract"
)

// spanFields is what one pass over a span's attributes collects besides
// the observation's values. Its strings and values point into the batch:
// ConsumeTraces clears them (clear) before the scratch is pooled.
type spanFields struct {
	source              bool
	hasGaps, hasWeights bool
	layer               string
	model               string
	provider, system    string
	operation           string
	gaps, weights       pcommon.Value // read only when hasGaps, hasWeights
	extra               []string      // values of cfg.Dimensions found on the span
	extraOK             []bool
}

// reset empties f for a span with n configured dimensions. It assigns the
// fields one by one: assigning the whole struct, which holds pointers,
// costs a bulk write barrier while the GC runs (a fifth of observe's time
// in collector profiles). gaps, weights and extra are read only under
// their flags, so they are left as they are.
func (f *spanFields) reset(n int) {
	f.source, f.hasGaps, f.hasWeights = false, false, false
	f.layer, f.model, f.provider, f.system, f.operation = "", "", "", "", ""
	f.extra, f.extraOK = f.extra[:n], f.extraOK[:n]
	clear(f.extraOK)
}

// clear drops every reference into the batch, so that a pooled scratch
// keeps no batch alive.
func (f *spanFields) clear() {
	f.reset(len(f.extra))
	f.gaps, f.weights = pcommon.Value{}, pcommon.Value{}
	clear(f.extra)
}

// scan reads everything the connector needs from the span's attributes in
// one pass: a span carries a few dozen attributes, and one pass with a
// prefix test beats a lookup per field.
func (c *spanReader) scan(attrs pcommon.Map, o *observation, f *spanFields) {
	prefix := c.src.keys.Prefix
	for key, v := range attrs.All() {
		if len(key) > len(prefix) && hasShortPrefix(key, prefix) {
			c.scanOwn(key, v, o, f)
			continue
		}
		if c.otherLens.mayHold(key) {
			c.scanOther(key, v, f)
		}
	}
}

// hasShortPrefix is strings.HasPrefix(key, prefix) for a short prefix.
// The prefix is a few bytes ("llm."): comparing them inline, first byte
// first, rejects the conventions' keys without the call to memequal that a
// string comparison of a non-constant length costs on every attribute.
func hasShortPrefix(key, prefix string) bool {
	if len(key) < len(prefix) {
		return false
	}
	key = key[:len(prefix)]
	for i := range len(prefix) {
		if key[i] != prefix[i] {
			return false
		}
	}
	return true
}

// scanOwn reads one key under the processor's prefix. Every key the
// processor writes is the prefix plus a fixed suffix: a switch on
// constants is a few comparisons.
func (c *spanReader) scanOwn(key string, v pcommon.Value, o *observation, f *spanFields) {
	switch suffix := key[len(c.src.keys.Prefix):]; suffix {
	case contract.SuffixSource:
		f.source = true
	case contract.SuffixLayer:
		f.layer = v.Str()
	case contract.SuffixModel:
		f.model = v.Str()
	case contract.SuffixTTFT:
		seconds(o, histTTFT, v)
	case contract.SuffixTPOT:
		seconds(o, histTPOT, v)
	case contract.SuffixE2E:
		seconds(o, histE2E, v)
	case contract.SuffixQueueTime:
		seconds(o, histQueue, v)
	case contract.SuffixInputTokens:
		tokens(o, histInputTokens, v)
	case contract.SuffixOutputTokens:
		tokens(o, histOutputTokens, v)
	case contract.SuffixCacheReadInputTokens:
		c.usageValue(o, usageCacheRead, v)
	case contract.SuffixCacheWriteInputTokens:
		c.usageValue(o, usageCacheWrite, v)
	case contract.SuffixReasoningOutputTokens:
		c.usageValue(o, usageReasoning, v)
	case contract.SuffixITLGaps:
		f.gaps, f.hasGaps = v, true
	case contract.SuffixITLGapWeights:
		f.weights, f.hasWeights = v, true
	default:
		// Only an SLO's keys remain to read; the processor's other keys
		// (the parts, the ITL summary, the stream flag) are not parsed.
		if hasShortPrefix(suffix, contract.SuffixSLO) {
			c.scanVerdict(key, v, o)
		}
	}
}

// scanVerdict reads an SLO verdict key, or its causes; observe keeps them
// only under a name the processors judge.
func (c *spanReader) scanVerdict(key string, v pcommon.Value, o *observation) {
	name, isMet, ok := c.src.keys.ParseSLOKey(key)
	if !ok {
		if name, ok := c.src.keys.ParseSLOCausesKey(key); ok {
			readCauses(v, o.slo(name), o)
		}
		return
	}
	so := o.slo(name)
	so.judged = true
	switch {
	case isMet && (v.Bool() || v.Type() == pcommon.ValueTypeBool): // Bool() reads false for a non-bool
		so.decided, so.met = true, v.Bool()
	case !isMet && v.Type() == pcommon.ValueTypeSlice:
		so.violations = readViolations(v.Slice(), o)
	}
}

// readViolations keeps the entries of the closed vocabulary; any other is
// a rejected value.
func readViolations(s pcommon.Slice, o *observation) violationSet {
	var set violationSet
	for _, e := range s.All() {
		i, ok := violationIndex(e.Str())
		if !ok {
			o.rejected++
			continue
		}
		set |= 1 << i
	}
	return set
}

// keyLengths is a set of key lengths: bit l for a length l < 64; longer
// keys are always in it. Most of a span's attributes are none of the few
// keys scanOther looks for, and their length alone says so, without a call
// and a string switch per attribute.
type keyLengths uint64

func lengthsOf(keys ...string) keyLengths {
	var set keyLengths
	for _, k := range keys {
		if len(k) < 64 {
			set |= 1 << len(k)
		}
	}
	return set
}

func (set keyLengths) mayHold(key string) bool {
	return len(key) >= 64 || set&(1<<len(key)) != 0
}

// scanOther reads the conventions' keys of the default dimensions and the
// configured dimensions.
func (c *spanReader) scanOther(key string, v pcommon.Value, f *spanFields) {
	switch key {
	case keyProviderName:
		f.provider = v.Str()
	case keySystem:
		f.system = v.Str()
	case keyOperationName:
		f.operation = v.Str()
	}
	for i, d := range c.cfg.Dimensions {
		if key == d.Name && v.Type() == pcommon.ValueTypeStr {
			f.extra[i], f.extraOK[i] = v.Str(), true
		}
	}
}

// value records a duration or count attribute; a negative, non-finite or
// wrongly typed one is counted and kept out of the histograms.
func value(o *observation, kind histKind, v pcommon.Value) {
	if f, ok := number(v); ok {
		o.set(kind, f)
	}
	if !o.has[kind] {
		o.rejected++
	}
}

// seconds records a duration the processor wrote: a double in range is
// taken inline (a call and the type switch per value were a tenth of the
// scan), anything else goes through value's checks.
func seconds(o *observation, kind histKind, v pcommon.Value) {
	if d := v.Double(); d > 0 && d <= contract.MaxSeconds {
		o.values[kind], o.has[kind] = d, true
		return
	}
	value(o, kind, v)
}

// tokens is seconds for a token count, which the processor writes as an
// int.
func tokens(o *observation, kind histKind, v pcommon.Value) {
	if n := v.Int(); n > 0 && n <= contract.MaxTokens {
		o.values[kind], o.has[kind] = float64(n), true
		return
	}
	value(o, kind, v)
}

// number reads a double or an int as a float64, ok false for any other
// type. Double() and Int() read 0 for every other type, so a non-zero
// result needs one type assertion; only a 0 needs the type switch that
// Type() costs. (Str() likewise reads "" for a non-string, which is why
// the scan reads strings with Str() alone.)
func number(v pcommon.Value) (float64, bool) {
	if d := v.Double(); d != 0 {
		return d, true
	}
	if i := v.Int(); i != 0 {
		return float64(i), true
	}
	t := v.Type()
	return 0, t == pcommon.ValueTypeDouble || t == pcommon.ValueTypeInt
}

// readGaps copies the span's gaps and their weights into o. A gap out of
// range is rejected alone; weights that do not pair with the gaps, or that
// add up to more tokens than any request has, make the whole list corrupt.
// The processor writes both lists packed (contract.AppendGaps); the slice
// form earlier builds wrote is read too.
func readGaps(f *spanFields, o *observation) {
	if !f.hasGaps {
		return
	}
	switch f.gaps.Type() {
	case pcommon.ValueTypeBytes:
		readPackedGaps(f, o)
	case pcommon.ValueTypeSlice:
		readSliceGaps(f, o)
	default:
		o.rejected++
	}
}

// readPackedGaps is readGaps for the packed form.
func readPackedGaps(f *spanFields, o *observation) {
	gaps := f.gaps.Bytes()
	n, ok := contract.GapCount(gaps)
	if !ok {
		o.rejected++
		return
	}
	if !f.hasWeights {
		var rejected int
		o.gaps, rejected = appendPackedGaps(o.gaps, gaps, n)
		o.rejected += rejected
		o.weights = o.weights[:0]
		return
	}
	if f.weights.Type() != pcommon.ValueTypeBytes || !packedWeightsValid(f.weights.Bytes(), n) {
		o.rejected++
		return
	}
	weights := f.weights.Bytes()
	for i := range n {
		d := contract.GapAt(gaps, i)
		if !packedGapValid(d) {
			o.rejected++
			continue
		}
		o.gaps = append(o.gaps, d)
		o.weights = append(o.weights, uint64(contract.WeightAt(weights, i)))
	}
}

// appendPackedGaps is appendGaps for the packed form: every value is a
// double, so only the range is tested.
func appendPackedGaps(dst []float64, gaps pcommon.ByteSlice, n int) ([]float64, int) {
	dst = slices.Grow(dst, n)
	out := dst[len(dst) : len(dst)+n]
	kept := 0
	for i := range out {
		d := contract.GapAt(gaps, i)
		if !packedGapValid(d) {
			continue
		}
		out[kept] = d
		kept++
	}
	return dst[:len(dst)+kept], n - kept
}

// packedGapValid is gapValue's range for a double: d in [-0, MaxSeconds].
// Positive doubles order as their bits, so (0, MaxSeconds] is one unsigned
// comparison (0 wraps round, negatives and NaNs are above); then ±0.
func packedGapValid(d float64) bool {
	b := math.Float64bits(d)
	return b-1 < math.Float64bits(contract.MaxSeconds) || b<<1 == 0
}

// packedWeightsValid is weightsValid for the packed form, with n gaps to
// pair with.
func packedWeightsValid(w pcommon.ByteSlice, n int) bool {
	if m, ok := contract.WeightCount(w); !ok || m != n {
		return false
	}
	var sum int64
	for i := range n {
		v := contract.WeightAt(w, i)
		if v < 1 || v > contract.MaxTokens {
			return false
		}
		sum += v
		if sum > contract.MaxTokens {
			return false
		}
	}
	return true
}

// readSliceGaps is readGaps for the slice form.
func readSliceGaps(f *spanFields, o *observation) {
	gaps := f.gaps.Slice()
	if !f.hasWeights {
		var rejected int
		o.gaps, rejected = appendGaps(o.gaps, gaps)
		o.rejected += rejected
		o.weights = o.weights[:0]
		return
	}
	if f.weights.Type() != pcommon.ValueTypeSlice || f.weights.Slice().Len() != gaps.Len() || !weightsValid(f.weights.Slice()) {
		o.rejected++
		return
	}
	weights := f.weights.Slice()
	for i, g := range gaps.All() {
		d, ok := gapValue(g)
		if !ok {
			o.rejected++
			continue
		}
		o.gaps = append(o.gaps, d)
		o.weights = append(o.weights, uint64(weights.At(i).Int()))
	}
}

// appendGaps appends gaps' valid values (gapValue) to dst and returns it
// with the number rejected: one loop over the pdata slice into memory
// grown once, with the per-value test inline, not a call and an append
// per gap.
func appendGaps(dst []float64, gaps pcommon.Slice) ([]float64, int) {
	n := gaps.Len()
	dst = slices.Grow(dst, n)
	out := dst[len(dst) : len(dst)+n]
	kept := 0
	// gapValue's test on the bits: positive doubles order as their bits,
	// so d in (0, MaxSeconds] is one unsigned comparison (0 wraps round,
	// negatives and NaNs are above); then ±0 is kept if it is a double.
	maxBits := math.Float64bits(contract.MaxSeconds)
	for i := range out {
		g := gaps.At(i)
		d := g.Double()
		if b := math.Float64bits(d); b-1 >= maxBits && (b<<1 != 0 || g.Type() != pcommon.ValueTypeDouble) {
			continue
		}
		out[kept] = d
		kept++
	}
	return dst[:len(dst)+kept], n - kept
}

// gapValue is g when it is a double in [0, contract.MaxSeconds]. Double()
// is 0 for any other type, so only a 0 needs the type switch that Type()
// costs: a positive in-range result is a double.
func gapValue(g pcommon.Value) (float64, bool) {
	d := g.Double()
	if d > 0 && d <= contract.MaxSeconds {
		return d, true
	}
	return d, d == 0 && g.Type() == pcommon.ValueTypeDouble
}

// weightsValid: every weight an int of at least 1, the sum at most
// contract.MaxTokens.
func weightsValid(w pcommon.Slice) bool {
	var sum int64
	for _, v := range w.All() {
		if v.Type() != pcommon.ValueTypeInt || v.Int() < 1 || v.Int() > contract.MaxTokens {
			return false
		}
		sum += v.Int()
		if sum > contract.MaxTokens {
			return false
		}
	}
	return true
}
