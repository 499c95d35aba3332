// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
	"math"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmslo/llmslo/internal/adjusted"
	"github.com/llmslo/llmslo/internal/exemplar"
	"github.com/llmslo/llmslo/internal/registry"
	"github.com/llmslo/llmslo/llmsloconnector/internal/series"
)

// spanReader reads what the connector needs from a span: the processor's
// attributes into an observation, and the span's series key. Its methods
// keep the receiver name c of the connector they were written for, so the
// reading code reads the same.
type spanReader struct {
	cfg *Config
	// src is where the processor's attributes are read and which SLO
	// names count; set at creation and again at Start, before any span.
	src *source
	// otherLens are the lengths of the keys scanOther reads.
	otherLens keyLengths
	// names are the metric names of the configured convention version.
	names *metricNames
	// classes are input_token_classes; nil when off.
	classes *inputClasses
}

func newSpanReader(cfg *Config) spanReader {
	r := spanReader{cfg: cfg, names: namesFor(cfg.MetricNames), classes: newInputClasses(cfg.InputTokenClasses)}
	r.otherLens = lengthsOf(keyProviderName, keySystem, keyOperationName)
	for _, d := range cfg.Dimensions {
		r.otherLens |= lengthsOf(d.Name)
	}
	// A provisional source: Start resolves it again once every processor
	// of the collector has registered.
	var err error
	if r.src, err = resolveSource(cfg.AttributePrefix, registry.Processors()); err != nil {
		r.src, _ = resolveSource(cfg.AttributePrefix, nil)
	}
	return r
}

// observe reads the span into sc.obs; false when the processor did not
// write it (no source, or a layer that is neither client nor server).
func (c *spanReader) observe(span ptrace.Span, sc *scratch) bool {
	o, f := &sc.obs, &sc.fields
	o.reset()
	f.reset(len(c.cfg.Dimensions))
	c.scan(span.Attributes(), o, f)
	if !f.source {
		return false
	}
	switch f.layer {
	case layerNames[layerServer]:
		o.layer = layerServer
	case layerNames[layerClient]:
		o.layer = layerClient
	default:
		return false
	}
	o.resolveSLOs(c.src.names)
	if c.classes != nil { // before failed() forgets the token counts
		o.inputClass = c.classes.of(o.values[histInputTokens], o.has[histInputTokens])
	}
	// Latency distributions describe successful requests (as vLLM's
	// statistics and the conventions' TTFT/TPOT metrics do); a failed span
	// adds only its duration, which the conventions record for failures too.
	if span.Status().Code() == ptrace.StatusCodeError {
		o.failed()
	} else {
		readGaps(f, o)
		if o.has[histOutputTokens] {
			o.tokens = uint64(o.values[histOutputTokens])
		}
	}
	if start, end := span.StartTimestamp(), span.EndTimestamp(); start != 0 && end >= start {
		o.set(histDuration, float64(end-start)/1e9)
	}
	o.adjusted = 1
	if c.cfg.Exemplars.Enabled {
		o.ref = exemplar.Exemplar{TraceID: span.TraceID(), SpanID: span.SpanID(), Time: span.EndTimestamp()}
	}
	if c.cfg.SamplingAdjustedCounts {
		c.readAdjusted(span, sc)
	}
	sc.rejected += int64(o.rejected)
	sc.ignored += int64(o.ignored)
	return true
}

// seriesKey builds the span's series key and dimension values in sc: the
// layer, then each dimension's value; a value is prefixed with 1 and ended
// by 0, an absent one is a single 0, so different dimension sets never
// collide. Values are repaired for the backend first, so two raw values
// that repair alike share a series. resStart is the index of the first
// resource dimension in dims.
func (c *spanReader) seriesKey(sc *scratch) (key []byte, dims []series.Dim, resStart int) {
	f, res := &sc.fields, &sc.resource
	key = append(sc.key[:0], byte(sc.obs.layer))
	resStart = math.MaxInt // until the resource dimensions: values to repair
	dims = sc.dims[:0]
	add := func(name, value string, present bool) {
		if !present {
			key = append(key, 0)
			return
		}
		if len(dims) < resStart {
			value = label(value, c.cfg.AttributeValueLengthLimit, &sc.labels)
		}
		key = append(key, 1)
		key = append(key, value...)
		key = append(key, 0)
		dims = append(dims, series.Dim{Name: name, Value: value})
	}
	add(attrRequestModel, f.model, f.model != "")
	provider := firstOf(f.provider, f.system)
	add(attrProviderName, provider, provider != "")
	add(attrOperationName, f.operation, f.operation != "")
	for i, d := range c.cfg.Dimensions {
		v, ok := f.extra[i], f.extraOK[i]
		if !ok {
			v, ok = res.dims[i], res.dimsOK[i]
		}
		if !ok && d.Default != nil {
			v, ok = *d.Default, true
		}
		add(d.Name, v, ok)
	}
	if c.classes != nil {
		// The connector's own names: nothing to repair, and a short
		// attribute_value_length_limit must not merge two classes.
		name := c.classes.names[sc.obs.inputClass]
		key = append(append(append(key, 1), name...), 0)
		dims = append(dims, series.Dim{Name: attrInputClass, Value: name})
	}
	// The resource's values were repaired when it was read: count its
	// repairs for this span, as if repaired here.
	resStart = len(dims)
	sc.labels.repaired += res.fixes.repaired
	sc.labels.truncated += res.fixes.truncated
	for i, name := range c.cfg.ResourceDimensions {
		add(name, res.values[i], res.valuesOK[i])
	}
	sc.key, sc.dims = key, dims
	return key, dims, resStart
}

// resourceValues are the dimension values a resource holds, read once for
// all of its spans instead of a lookup in its attributes per span.
type resourceValues struct {
	values   []string // of cfg.ResourceDimensions, repaired for the backend
	valuesOK []bool
	fixes    labelFixes // the repairs of values
	dims     []string   // of cfg.Dimensions, for spans that lack them
	dimsOK   []bool
}

// read fills r from a resource's attributes.
func (r *resourceValues) read(m pcommon.Map, cfg *Config) {
	r.values, r.valuesOK, r.fixes = r.values[:0], r.valuesOK[:0], labelFixes{}
	for _, name := range cfg.ResourceDimensions {
		v, ok := resourceStr(m, name)
		if ok {
			v = label(v, cfg.AttributeValueLengthLimit, &r.fixes)
		}
		r.values, r.valuesOK = append(r.values, v), append(r.valuesOK, ok)
	}
	r.dims, r.dimsOK = r.dims[:0], r.dimsOK[:0]
	for _, d := range cfg.Dimensions {
		v, ok := resourceStr(m, d.Name)
		r.dims, r.dimsOK = append(r.dims, v), append(r.dimsOK, ok)
	}
}

// clear drops the references into the batch.
func (r *resourceValues) clear() {
	clear(r.values)
	clear(r.dims)
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func resourceStr(m pcommon.Map, key string) (string, bool) {
	if v, ok := m.Get(key); ok && v.Type() == pcommon.ValueTypeStr && v.Str() != "" {
		return v.Str(), true
	}
	return "", false
}

// defaultMaxAdjustedCount admits sampling at 1% and above: a forged
// threshold then buys a sender at most 100 requests per span.
const defaultMaxAdjustedCount = 100

// readAdjusted sets the number of requests the span stands for from its
// tracestate (OTEP 235); a malformed threshold counts one and is counted.
//
// The spans of a batch from one sampler share one tracestate, so the last
// one read is remembered for the batch (ConsumeTraces forgets it).
func (c *spanReader) readAdjusted(span ptrace.Span, sc *scratch) {
	ts := span.TraceState().AsRaw()
	if ts != sc.lastTS || !sc.lastTSRead {
		sc.lastTS, sc.lastTSRead = ts, true
		sc.lastN, sc.lastOutcome = adjusted.Count(ts)
		if sc.lastN > c.cfg.MaxAdjustedCount {
			sc.lastN, sc.lastOutcome = 1, adjusted.Malformed
		}
	}
	sc.obs.adjusted = sc.lastN
	if sc.lastOutcome == adjusted.Malformed {
		sc.malformedTracestate++
	}
}
