// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmslo/llmslo/internal/catalog"
	"github.com/llmslo/llmslo/internal/otlpio"
	"github.com/llmslo/llmslo/tools/internal/loadgen"
	"github.com/llmslo/llmslo/tools/internal/report/schema"
)

// attributionCollector judges one TTFT objective with trace assembly on, so
// a client span is joined to its engine span, and sends the spans and the
// connector's metrics back.
const attributionCollector = `
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:%d
processors:
  llm_slo:
    trace_assembly:
      enabled: true
      wait: 5s
    slos:
      - name: interactive
        ttft: 500ms
connectors:
  llm_slo:
    metrics_flush_interval: 1s
exporters:
  otlp_http:
    endpoint: http://%s
    compression: none
service:
  pipelines:
    traces:
      receivers: [otlp]
      processors: [llm_slo]
      exporters: [otlp_http, llm_slo]
    metrics:
      receivers: [llm_slo]
      exporters: [otlp_http]
  telemetry:
    metrics:
      level: none
`

// attributionCase is one injected incident: its kind, the shape whose
// spans show the part it grows, and the layer judged.
type attributionCase struct {
	kind  loadgen.IncidentKind
	shape loadgen.Shape
	layer string
	inc   loadgen.Incident
}

// TestAttributionEndToEnd: three incidents injected by the load generator
// (a queue surge, long prompts, a network delay between client and engine)
// through the built collector; the TTFT misses the processor attributes to
// the injected cause (llm.slo.interactive.causes) are compared with the
// generator's truth: which misses the incident made; and the connector's
// llm.slo.violations by llm.slo.cause over the run count the same misses
// by the same causes.
func TestAttributionEndToEnd(t *testing.T) {
	recv, err := otlpio.NewReceiver("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = recv.Close() })
	port := freePort(t)
	startCollector(t, fmt.Sprintf(attributionCollector, port, recv.Addr()))
	cases := []attributionCase{
		{kind: loadgen.IncidentQueue, shape: loadgen.ShapeVLLM, layer: "server",
			inc: loadgen.Incident{Kind: loadgen.IncidentQueue, Delay: time.Second}},
		{kind: loadgen.IncidentLongPrompt, shape: loadgen.ShapeVLLM, layer: "server",
			inc: loadgen.Incident{Kind: loadgen.IncidentLongPrompt, Factor: 8}},
		{kind: loadgen.IncidentNetwork, shape: loadgen.ShapeJoined, layer: "client",
			inc: loadgen.Incident{Kind: loadgen.IncidentNetwork, Delay: time.Second}},
	}
	sent := 0
	before := map[string]map[string]int{} // the misses by cause of the earlier cases, by layer
	for i, c := range cases {
		t.Run(string(c.kind), func(t *testing.T) {
			inc := c.inc
			inc.Model = loadgen.DefaultModel
			var truths []loadgen.Truth
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			truths, err := loadgen.Run(ctx, loadgen.Config{Endpoint: fmt.Sprintf("127.0.0.1:%d", port), Rate: 5,
				Seed: 41 + uint64(i), Fast: true, Count: 300, ModelAttr: true, Incident: &inc,
				Models: map[string]float64{loadgen.DefaultModel: 1}, Shapes: map[loadgen.Shape]float64{c.shape: 1}})
			require.NoError(t, err)
			sent += len(truths)
			require.NoError(t, recv.WaitSpans(ctx, sent))
			spans := spansByID(recv)
			got := checkAttribution(t, c, truths, spans)
			checkCounters(ctx, t, recv, c.layer, addCounts(before[c.layer], got))
			before[c.layer] = addCounts(before[c.layer], got)
		})
	}
	t.Run("report", func(t *testing.T) {
		checkReport(t, fmt.Sprintf(attributionCollector, port, recv.Addr()), recv.Traces())
	})
}

// checkReport runs the built llmslo report, with the collector's
// configuration, over every span the collector exported, and checks its
// attribution: the TTFT misses by cause per layer are the processor's
// (want, the same as the generator's truth and the connector's counters),
// their shares those counts over the layer's misses. The misses are every
// span's, the engine spans of the joined traces of the network incident
// too.
func checkReport(t *testing.T, config string, traces []ptrace.Traces) {
	want := map[string]map[string]int{}
	for _, td := range traces {
		otlpio.Spans(td, func(_ ptrace.ResourceSpans, s ptrace.Span) {
			if cause, ok := ttftCause(s); ok {
				layer := str(s.Attributes(), "llm.layer")
				if want[layer] == nil {
					want[layer] = map[string]int{}
				}
				want[layer][cause]++
			}
		})
	}
	dir := t.TempDir()
	cfgPath, tracesPath := filepath.Join(dir, "collector.yaml"), filepath.Join(dir, "traces.jsonl")
	require.NoError(t, os.WriteFile(cfgPath, []byte(config), 0o644))
	var lines bytes.Buffer
	for _, td := range traces {
		b, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
		require.NoError(t, err)
		lines.Write(append(b, '\n'))
	}
	require.NoError(t, os.WriteFile(tracesPath, lines.Bytes(), 0o644))
	bin, err := buildCLI()
	require.NoError(t, err)
	out, err := exec.Command(bin, "report", "--config", cfgPath, "--format", "json", "--by", "layer", "--quiet", tracesPath).Output()
	require.NoError(t, err)
	var r schema.Report
	require.NoError(t, json.Unmarshal(out, &r))
	require.Len(t, r.Attribution, 1)
	got := map[string]map[string]int{}
	for _, g := range r.Attribution[0].Groups[1:] {
		layer := g.Group["layer"]
		for _, c := range g.Constraints {
			if c.Constraint != "ttft" {
				continue
			}
			got[layer] = map[string]int{}
			for _, cc := range c.Causes {
				got[layer][cc.Cause] = int(cc.Requests)
				assert.Equal(t, float64(cc.Requests)/float64(c.Misses), float64(cc.Share), "%s %s share", layer, cc.Cause)
				t.Logf("llmslo report, layer %s: ttft:%s %d of %d misses, %.1f%% (95%% CI %.1f%%-%.1f%%)", layer, cc.Cause,
					cc.Requests, c.Misses, 100*float64(cc.Share), 100*float64(cc.ShareCI95[0]), 100*float64(cc.ShareCI95[1]))
			}
		}
	}
	assert.Equal(t, want, got, "llmslo report attributes the TTFT misses as the processor did")
	slowest := r.Attribution[0].Slowest
	require.NotEmpty(t, slowest)
	assert.True(t, slowest[0].Parts["queue"].Valid() || slowest[0].Parts["network"].Valid(), "the slowest miss shows its parts")
}

// spansByID indexes every span received so far by its span id (hex).
func spansByID(recv *otlpio.Receiver) map[string]ptrace.Span {
	out := map[string]ptrace.Span{}
	for _, td := range recv.Traces() {
		otlpio.Spans(td, func(_ ptrace.ResourceSpans, s ptrace.Span) { out[s.SpanID().String()] = s })
	}
	return out
}

// checkAttribution checks, over the case's layer, each TTFT miss's cause
// against the generator's truth (the largest of the parts the span shows:
// truthCause), and that the injected cause takes most misses at a load
// that queues little of itself. It returns the misses by cause.
func checkAttribution(t *testing.T, c attributionCase, truths []loadgen.Truth, spans map[string]ptrace.Span) map[string]int {
	cause := c.kind.Cause()
	var misses, attributed, agree, truthMisses, truthCaused int
	got := map[string]int{}
	for i := range truths {
		tr := &truths[i]
		if tr.Layer != c.layer {
			continue
		}
		if tr.TTFT != nil && *tr.TTFT > 0.5 {
			truthMisses++
			if truthCause(tr) == cause {
				truthCaused++
			}
		}
		s, ok := spans[tr.SpanID]
		require.True(t, ok, "span %s of the run was not received", tr.SpanID)
		g, ok := ttftCause(s)
		if !ok {
			continue
		}
		misses++
		got[g]++
		if g == cause {
			attributed++
		}
		if g == truthCause(tr) {
			agree++
		}
	}
	require.Positive(t, truthMisses, "the incident made no TTFT miss")
	share, truthShare := float64(attributed)/float64(misses), float64(truthCaused)/float64(truthMisses)
	t.Logf("%s incident, %s spans: %d TTFT misses (truth %d); causes %v; on %s: %.3f (truth %.3f); %d of %d as the truth's largest part",
		c.kind, c.layer, misses, truthMisses, got, cause, share, truthShare, agree, misses)
	assert.Equal(t, truthMisses, misses, "the processor's TTFT misses are the truth's")
	assert.Equal(t, misses, agree, "every miss put on the truth's largest part")
	assert.InDelta(t, truthShare, share, 1e-9, "share of misses put on %s", cause)
	assert.GreaterOrEqual(t, share, 0.9, "most misses of a %s incident are put on it", c.kind)
	return got
}

// addCounts is a + b, a new map.
func addCounts(a, b map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range a {
		out[k] += v
	}
	for k, v := range b {
		out[k] += v
	}
	return out
}

// checkCounters waits for the connector's cumulative TTFT violations of
// the layer, by cause, to reach want (every miss of the run so far on the
// layer), and checks they are exactly want.
func checkCounters(ctx context.Context, t *testing.T, recv *otlpio.Receiver, layer string, want map[string]int) {
	var got map[string]int
	for {
		got = ttftViolationsByCause(recv, layer)
		if fmt.Sprint(got) == fmt.Sprint(want) || ctx.Err() != nil {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("connector, llm.layer=%s: llm.slo.violations{llm.slo.constraint=ttft} by llm.slo.cause %v", layer, got)
	assert.Equal(t, want, got, "the connector counts the processor's misses by their causes")
}

// ttftViolationsByCause sums, over the series of the layer, the latest
// cumulative llm.slo.violations of SLO interactive's TTFT, by cause.
func ttftViolationsByCause(recv *otlpio.Receiver, layer string) map[string]int {
	latest := map[string]pmetric.NumberDataPoint{} // by series
	for _, md := range recv.Metrics() {
		for _, rm := range md.ResourceMetrics().All() {
			for _, sm := range rm.ScopeMetrics().All() {
				for _, m := range sm.Metrics().All() {
					if m.Name() != catalog.SLOViolations.Name || m.Type() != pmetric.MetricTypeSum {
						continue
					}
					for _, dp := range m.Sum().DataPoints().All() {
						a := dp.Attributes()
						if str(a, catalog.AttrSLOName) != "interactive" || str(a, catalog.AttrSLOConstraint) != "ttft" ||
							str(a, "llm.layer") != layer {
							continue
						}
						key := fmt.Sprint(a.AsRaw())
						if prev, ok := latest[key]; !ok || dp.Timestamp() >= prev.Timestamp() {
							latest[key] = dp
						}
					}
				}
			}
		}
	}
	out := map[string]int{}
	for _, dp := range latest {
		n := dp.IntValue()
		if dp.ValueType() == pmetric.NumberDataPointValueTypeDouble { // sampling-adjusted
			n = int64(dp.DoubleValue())
		}
		out[str(dp.Attributes(), catalog.AttrSLOCause)] += int(n)
	}
	return out
}

// str is the attribute's string value, "" when absent.
func str(a pcommon.Map, key string) string {
	v, ok := a.Get(key)
	if !ok {
		return ""
	}
	return v.Str()
}

// truthCause is the attribution rule applied to the generator's parts:
// the largest of queue, prefill, KV transfer and network time (a client
// span joined to its engine span shows all; an engine span no network).
// The generator's parts sum to the TTFT, so "less than half explained"
// (unattributed) cannot arise here.
func truthCause(tr *loadgen.Truth) string {
	best, name := -1.0, "unattributed"
	for _, p := range []struct {
		name string
		v    *float64
	}{{"queue", tr.QueueTime}, {"prefill", tr.PrefillTime}, {"kv_transfer", tr.KVTransferTime}, {"network", tr.NetworkTime}} {
		if p.v != nil && *p.v > best {
			best, name = *p.v, p.name
		}
	}
	return name
}

// ttftCause returns the cause of the span's TTFT miss, if it missed.
func ttftCause(s ptrace.Span) (string, bool) {
	v, ok := s.Attributes().Get("llm.slo.interactive.causes")
	if !ok {
		return "", false
	}
	for _, e := range v.Slice().All() {
		if c, found := strings.CutPrefix(e.Str(), "ttft:"); found {
			return c, true
		}
	}
	return "", false
}
