// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	llmsloprocessor "github.com/llmslo/llmslo"
	"github.com/llmslo/llmslo/tools/internal/report/render"
	"github.com/llmslo/llmslo/tools/internal/report/schema"
)

// lawRequest is one engine request of the capacity tests: its replica, its
// span's start and end (ns), and the in-flight count on its replica at its
// start, which the test counts itself and the TTFT law reads.
type lawRequest struct {
	replica    string
	start, end int64
	inFlight   int
	failed     bool
}

// lawTTFT is the known law: 100 ms plus 50 ms per other request in flight
// on the replica, so a 500 ms TTFT bound holds up to 9 in flight.
func lawTTFT(inFlight int) float64 { return 0.1 + 0.05*float64(inFlight-1) }

// lawRequests are two replicas' requests arriving ever faster (Poisson,
// from 1 to peakRate per second over a minute, quadratically), each
// lasting 2-2.4 s; every 40th starts
// in the same nanosecond as the one before, every 50th in the one it ends,
// and a few at low load fail. Their
// in-flight counts are counted here pairwise, apart from the engine's sweep.
func lawRequests(peakRate float64) []lawRequest {
	rng := rand.New(rand.NewPCG(47, 1))
	var out []lawRequest
	for _, rep := range []string{"replica-a", "replica-b"} {
		at := 0.0
		for i := 0; ; i++ {
			at += rng.ExpFloat64() / (1 + (peakRate-1)*(at/60)*(at/60))
			if at > 60 {
				break
			}
			start := base + int64(at*1e9)
			switch {
			case i%40 == 39:
				start = out[len(out)-1].start
			case i%50 == 49:
				start = out[len(out)-1].end // no longer in flight
			}
			out = append(out, lawRequest{replica: rep, start: start, end: start + int64(2e9) + int64(i%5)*int64(1e8)})
		}
	}
	for i := range out {
		for j := range out {
			if out[j].replica == out[i].replica && out[j].start <= out[i].start && out[i].start < out[j].end {
				out[i].inFlight++
			}
		}
		// Failures where the levels hold many requests, so that they
		// cannot sink a level on their own.
		out[i].failed = i%13 == 12 && out[i].inFlight <= 5
	}
	return out
}

// lawTraces writes the requests as vLLM llm_request spans, one resource
// per replica (service.instance.id), and a client span per replica that
// must not count (the capacity is the server layer's).
func lawTraces(reqs []lawRequest) ptrace.Traces {
	td := ptrace.NewTraces()
	res := map[string]ptrace.SpanSlice{}
	for i, r := range reqs {
		spans, ok := res[r.replica]
		if !ok {
			rs := td.ResourceSpans().AppendEmpty()
			rs.Resource().Attributes().PutStr("service.name", "vllm")
			rs.Resource().Attributes().PutStr("service.instance.id", r.replica)
			spans = rs.ScopeSpans().AppendEmpty().Spans()
			res[r.replica] = spans
			client := spans.AppendEmpty()
			client.SetName("chat llama")
			client.SetKind(ptrace.SpanKindClient)
			client.SetTraceID(pcommon.TraceID{1, byte(len(res))})
			client.SetSpanID(pcommon.SpanID{1, byte(len(res))})
			client.SetStartTimestamp(pcommon.Timestamp(r.start))
			client.SetEndTimestamp(pcommon.Timestamp(r.start + int64(time.Second)))
			client.Attributes().PutStr("gen_ai.operation.name", "chat")
			client.Attributes().PutStr("gen_ai.request.model", "llama")
			client.Attributes().PutDouble("gen_ai.response.time_to_first_chunk", 0.1)
		}
		s := spans.AppendEmpty()
		s.SetName("llm_request")
		s.SetKind(ptrace.SpanKindServer)
		var tid [16]byte
		var sid [8]byte
		binary.BigEndian.PutUint64(tid[8:], uint64(i+1))
		binary.BigEndian.PutUint64(sid[:], uint64(i+1))
		s.SetTraceID(tid)
		s.SetSpanID(sid)
		s.SetStartTimestamp(pcommon.Timestamp(r.start))
		s.SetEndTimestamp(pcommon.Timestamp(r.end))
		a := s.Attributes()
		a.PutStr("gen_ai.response.model", "llama")
		if r.failed {
			s.Status().SetCode(ptrace.StatusCodeError)
			continue
		}
		a.PutDouble("gen_ai.latency.time_to_first_token", lawTTFT(r.inFlight))
		a.PutDouble("gen_ai.latency.e2e", float64(r.end-r.start)/1e9)
		a.PutInt("gen_ai.usage.output_tokens", 100)
	}
	return td
}

// lawSLO is an SLO of a TTFT bound and an objective in percent.
func lawSLO(name string, ttft time.Duration, objective float64) llmsloprocessor.SLOConfig {
	s := llmsloprocessor.SLOConfig{Name: name, Objective: &objective}
	s.SetThreshold("ttft", ttft)
	return s
}

// lawReport runs the requests through an engine with slos.
func lawReport(t *testing.T, reqs []lawRequest, minRequests int, slos ...llmsloprocessor.SLOConfig) *Report {
	opts := goldenOptionsWith(t, func(c *llmsloprocessor.Config) { c.SLOs = slos })
	opts.CapacityMinRequests = minRequests
	e, err := NewEngine(context.Background(), opts)
	require.NoError(t, err)
	require.NoError(t, e.Consume(context.Background(), lawTraces(reqs)))
	require.NoError(t, e.Close(context.Background()))
	return e.Report([]string{"law"})
}

// lawPeak is the most requests in flight at once over both replicas, and
// the least total in flight that the period [first start, last end] spends
// at most 99% of its time above, by brute force over every interval
// between two event times.
func lawPeak(reqs []lawRequest) (peak, p99 int64) {
	var times []int64
	for _, r := range reqs {
		times = append(times, r.start, r.end)
	}
	slices.Sort(times)
	times = slices.Compact(times)
	at := map[int64]int64{} // ns at each total
	for i := 0; i+1 < len(times); i++ {
		var n int64
		for _, r := range reqs {
			if r.start <= times[i] && times[i] < r.end {
				n++
			}
		}
		peak = max(peak, n)
		at[n] += times[i+1] - times[i]
	}
	period := float64(times[len(times)-1] - times[0])
	var cum int64
	for n := int64(0); n <= peak; n++ {
		cum += at[n]
		if float64(cum) >= 0.99*period {
			return peak, n
		}
	}
	return peak, peak
}

// TestCapacityLaw: two replicas whose TTFT grows with the requests in
// flight by lawTTFT. Every level's requests and met equal the test's own
// count, the knee of a 500 ms bound is 9 in flight, a bound no request
// meets has none, one every request meets is not reached, and the
// replicas needed are ceil(peak / 9).
func TestCapacityLaw(t *testing.T) {
	reqs := lawRequests(30)
	r := lawReport(t, reqs, 1,
		lawSLO("law", 500*time.Millisecond, 95), lawSLO("loose", 5*time.Second, 95), lawSLO("tight", 50*time.Millisecond, 95))
	require.Len(t, r.Capacity, 3)
	peak, p99 := lawPeak(reqs)
	require.Greater(t, peak, int64(30), "the ramp must load the replicas well past the knee")
	group := schema.Group{"model": "llama", "layer": "server"}
	for _, c := range []struct {
		slo      string
		met      func(lawRequest) bool
		knee     string
		kneeAt   *int64
		needPeak *int64
		needP99  *int64
	}{
		{"law", func(q lawRequest) bool { return lawTTFT(q.inFlight) <= 0.5 }, schema.KneeFound, ptr64(9), ptr64(ceil(peak, 9)), ptr64(ceil(p99, 9))},
		{"loose", func(lawRequest) bool { return true }, schema.KneeNotReached, nil, nil, nil},
		{"tight", func(lawRequest) bool { return false }, schema.KneeNone, nil, nil, nil},
	} {
		t.Run(c.slo, func(t *testing.T) {
			// The test's own count of every level.
			want := map[int64]*schema.CapacityLevel{}
			for _, q := range reqs {
				l := want[int64(q.inFlight)]
				if l == nil {
					l = &schema.CapacityLevel{InFlight: int64(q.inFlight), InFlightMax: int64(q.inFlight)}
					want[int64(q.inFlight)] = l
				}
				l.Requests++
				if !q.failed && c.met(q) {
					l.Met++
				}
			}
			i := slices.IndexFunc(r.Capacity, func(x schema.Capacity) bool { return x.SLO == c.slo })
			require.GreaterOrEqual(t, i, 0)
			got := r.Capacity[i]
			assert.Equal(t, group, got.Group)
			assert.Equal(t, "service.instance.id", got.ReplicaKey)
			require.Len(t, got.Levels, len(want))
			for k, l := range got.Levels {
				w := want[l.InFlight]
				require.NotNil(t, w, "level %d", l.InFlight)
				assert.Equal(t, [3]int64{w.InFlightMax, w.Requests, w.Met}, [3]int64{l.InFlightMax, l.Requests, l.Met}, "level %d", l.InFlight)
				lo, hi := wilson(int(w.Met), int(w.Requests))
				assert.Equal(t, [3]schema.Num{schema.Num(float64(w.Met) / float64(w.Requests)), schema.Num(lo), schema.Num(hi)},
					[3]schema.Num{l.Goodput, l.CILow, l.CIHigh})
				if k > 0 {
					assert.Greater(t, l.InFlight, got.Levels[k-1].InFlightMax, "ascending")
				}
			}
			assert.Equal(t, c.knee, got.Knee)
			assert.Equal(t, c.kneeAt, got.KneeInFlight)
			assert.Equal(t, peak, got.PeakInFlight)
			assert.Equal(t, p99, got.P99InFlight)
			assert.Equal(t, int64(2), got.ReplicasObserved)
			assert.Equal(t, c.needPeak, got.ReplicasNeeded)
			assert.Equal(t, c.needP99, got.ReplicasNeededP99)
		})
	}
	assert.Equal(t, int64(0), r.CapacityUnplaced)
}

func ptr64(v int64) *int64 { return &v }

func ceil(a, b int64) int64 { return int64(math.Ceil(float64(a) / float64(b))) }

// TestCapacityMergeLevels: adjacent levels merge from the lowest until
// each holds the minimum; a short remainder joins the level below.
func TestCapacityMergeLevels(t *testing.T) {
	lv := func(in, inMax, req, met int64) schema.CapacityLevel {
		return schema.CapacityLevel{InFlight: in, InFlightMax: inMax, Requests: req, Met: met}
	}
	for _, c := range []struct {
		name string
		in   []schema.CapacityLevel
		min  int
		want []schema.CapacityLevel
	}{
		{"none short", []schema.CapacityLevel{lv(1, 1, 20, 20), lv(2, 2, 25, 20)}, 20, []schema.CapacityLevel{lv(1, 1, 20, 20), lv(2, 2, 25, 20)}},
		{"merge up", []schema.CapacityLevel{lv(1, 1, 5, 5), lv(2, 2, 10, 9), lv(4, 4, 6, 3), lv(5, 5, 30, 1)}, 20,
			[]schema.CapacityLevel{lv(1, 4, 21, 17), lv(5, 5, 30, 1)}},
		{"remainder joins below", []schema.CapacityLevel{lv(1, 1, 30, 30), lv(2, 2, 3, 1), lv(7, 7, 4, 0)}, 20,
			[]schema.CapacityLevel{lv(1, 7, 37, 31)}},
		{"all short", []schema.CapacityLevel{lv(3, 3, 2, 1), lv(4, 4, 2, 2)}, 20, []schema.CapacityLevel{lv(3, 4, 4, 3)}},
		{"min 1", []schema.CapacityLevel{lv(3, 3, 2, 1), lv(4, 4, 1, 1)}, 1, []schema.CapacityLevel{lv(3, 3, 2, 1), lv(4, 4, 1, 1)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := mergeLevels(slices.Clone(c.in), c.min)
			for i := range got {
				got[i].Goodput, got[i].CILow, got[i].CIHigh = 0, 0, 0
			}
			assert.Equal(t, c.want, got)
		})
	}
}

// TestCapacityKnee: the knee is the last level before the first whose
// interval's upper bound falls under the objective, whatever comes after.
func TestCapacityKnee(t *testing.T) {
	lv := func(in, inMax, req, met int64) schema.CapacityLevel {
		return schema.CapacityLevel{InFlight: in, InFlightMax: inMax, Requests: req, Met: met}
	}
	for _, c := range []struct {
		name   string
		levels []schema.CapacityLevel
		knee   string
		at     *int64
	}{
		// 95/100 has an upper bound of 97.8%; 90/100 of 94.5%.
		{"found", []schema.CapacityLevel{lv(1, 3, 100, 100), lv(4, 6, 100, 95), lv(7, 7, 100, 90), lv(8, 9, 100, 100)}, schema.KneeFound, ptr64(6)},
		{"few requests hold", []schema.CapacityLevel{lv(1, 1, 100, 100), lv(2, 2, 5, 4)}, schema.KneeNotReached, nil},
		{"none", []schema.CapacityLevel{lv(1, 1, 100, 90), lv(2, 2, 100, 100)}, schema.KneeNone, nil},
		{"not reached", []schema.CapacityLevel{lv(1, 1, 100, 100), lv(2, 5, 100, 96)}, schema.KneeNotReached, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			levels := mergeLevels(c.levels, 1)
			knee, at := knee(levels, 0.95)
			assert.Equal(t, c.knee, knee)
			assert.Equal(t, c.at, at)
		})
	}
}

// TestCapacityUnplaced: server-layer requests without a replica attribute
// are counted and left out; --capacity-by chooses the attribute.
func TestCapacityUnplaced(t *testing.T) {
	reqs := lawRequests(30)[:50]
	td := lawTraces(reqs)
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		a := td.ResourceSpans().At(i).Resource().Attributes()
		v, _ := a.Get("service.instance.id")
		a.PutStr("k8s.pod.name", "pod-"+v.Str())
		a.Remove("service.instance.id")
	}
	for _, c := range []struct {
		by       []string
		unplaced int64
		key      string
	}{{nil, 0, "k8s.pod.name"}, {[]string{"host.name"}, 50, ""}, {[]string{"host.name", "k8s.pod.name"}, 0, "k8s.pod.name"}} {
		t.Run(fmt.Sprint(c.by), func(t *testing.T) {
			opts := goldenOptionsWith(t, func(cfg *llmsloprocessor.Config) {
				cfg.SLOs = []llmsloprocessor.SLOConfig{lawSLO("law", time.Second, 90)}
			})
			opts.CapacityBy = c.by
			e, err := NewEngine(context.Background(), opts)
			require.NoError(t, err)
			cp := ptrace.NewTraces()
			td.CopyTo(cp)
			require.NoError(t, e.Consume(context.Background(), cp))
			require.NoError(t, e.Close(context.Background()))
			r := e.Report(nil)
			assert.Equal(t, c.unplaced, r.CapacityUnplaced)
			if c.key == "" {
				assert.Empty(t, r.Capacity)
				return
			}
			require.Len(t, r.Capacity, 1)
			assert.Equal(t, c.key, r.Capacity[0].ReplicaKey)
			var n int64
			for _, l := range r.Capacity[0].Levels {
				n += l.Requests
			}
			assert.Equal(t, int64(50), n)
		})
	}
}

// TestCapacityGolden: the capacity of the law's requests (up to 12
// arrivals per second, levels of at least 20 requests) in every format:
// the text and Markdown sections, the HTML section (a plot per SLO), and
// the JSON's capacity fields.
func TestCapacityGolden(t *testing.T) {
	r := lawReport(t, lawRequests(12), 0,
		lawSLO("law", 500*time.Millisecond, 95), lawSLO("loose", 5*time.Second, 95), lawSLO("tight", 50*time.Millisecond, 95))
	var txt, md, js, page bytes.Buffer
	require.NoError(t, render.WriteText(&txt, r))
	require.NoError(t, render.WriteMarkdown(&md, r))
	require.NoError(t, render.WriteJSON(&js, r))
	require.NoError(t, render.WriteHTML(&page, r))
	if out := os.Getenv("LLMSLO_HTML"); out != "" {
		require.NoError(t, os.WriteFile(out, page.Bytes(), 0o644))
	}
	checkGolden(t, "testdata/golden/capacity.txt", section(t, txt.String(), "Capacity: ", "\nLatency"))
	checkGolden(t, "testdata/golden/capacity.md", section(t, md.String(), "## Capacity: ", "\n## Latency"))
	html := section(t, page.String(), "<h2>Capacity: ", "\n<h2>Latency")
	assert.Equal(t, 3, bytes.Count(html, []byte("<svg ")), "a plot per SLO")
	assert.Contains(t, string(html), "knee: 9 in flight")
	// The plots' drawing is the shared plot code's (TestCapacityPlot reads
	// this one's lines); the golden keeps the section's own markup.
	checkGolden(t, "testdata/golden/capacity.html", regexp.MustCompile(`(?s)<svg .*?</svg>`).ReplaceAll(html, []byte("<svg>plot</svg>")))
	var all map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(js.Bytes(), &all))
	capJSON := map[string]json.RawMessage{}
	for _, k := range []string{"capacity_by", "capacity_min_requests", "capacity_unplaced", "capacity"} {
		capJSON[k] = all[k]
	}
	b, err := json.MarshalIndent(capJSON, "", "  ")
	require.NoError(t, err)
	checkGolden(t, "testdata/golden/capacity.json", append(b, '\n'))
}

// section is the part of a rendered report from the first line starting
// with from up to the next to.
func section(t *testing.T, doc, from, to string) []byte {
	t.Helper()
	i := strings.Index(doc, from)
	require.GreaterOrEqual(t, i, 0, "no %q", from)
	j := strings.Index(doc[i:], to)
	require.GreaterOrEqual(t, j, 0, "no %q after %q", to, from)
	return []byte(doc[i : i+j+1])
}

// TestCapacityPlot: on the law's plot, the objective's dashed line lies at
// 95% of the goodput axis and the knee's at 9 requests in flight, read
// against the grid's lines and their tick labels.
func TestCapacityPlot(t *testing.T) {
	r := lawReport(t, lawRequests(12), 0, lawSLO("law", 500*time.Millisecond, 95))
	var page bytes.Buffer
	require.NoError(t, render.WriteHTML(&page, r))
	p := plotWith(t, page.String(), "SLO law, llama / server: goodput by requests in flight")
	x0, y0, _, y1 := p.dataArea(t)
	// The vertical grid lines, left to right, are the labelled x ticks.
	var gridX []float64
	for _, path := range p.paths {
		if strings.Contains(path.style, "stroke:#808080") && len(path.pts) == 2 && path.pts[0][0] == path.pts[1][0] {
			gridX = append(gridX, path.pts[0][0])
		}
	}
	slices.Sort(gridX)
	gridX = slices.Compact(gridX)
	var labels []float64
	for _, tx := range p.texts {
		if v, err := strconv.ParseFloat(tx.s, 64); err == nil && tx.y < y0 && tx.x > x0-20 {
			labels = append(labels, v)
		}
	}
	slices.Sort(labels)
	require.Len(t, labels, len(gridX), "x tick labels %v, grid lines %v", labels, gridX)
	xOf := func(v float64) float64 {
		n := len(gridX) - 1
		return gridX[0] + (v-labels[0])/(labels[n]-labels[0])*(gridX[n]-gridX[0])
	}
	var knee, objective []svgPath
	for _, path := range p.paths {
		switch {
		case strings.Contains(path.style, "stroke:#D63B2F") && len(path.pts) == 2:
			knee = append(knee, path)
		case strings.Contains(path.style, "stroke:#2E9E4F") && len(path.pts) == 2 && path.pts[0][1] == path.pts[1][1]:
			objective = append(objective, path)
		}
	}
	require.NotEmpty(t, knee, "the knee's line")
	require.NotEmpty(t, objective, "the objective's line")
	assert.InDelta(t, xOf(9), knee[0].pts[0][0], 0.5, "knee at 9 in flight")
	assert.InDelta(t, y0+0.95/1.02*(y1-y0), objective[0].pts[0][1], 0.5, "objective at 95%% (the data area spans 0 to 1.02)")
	_, ok := p.text("knee: 9 in flight")
	assert.True(t, ok, "the legend names the knee")
}
