// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
	"context"
	"encoding/binary"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

var fuzzKeys = []string{"llm.metrics.source", "llm.layer", "llm.model", "llm.ttft", "llm.tpot", "llm.e2e", "llm.queue_time",
	"llm.output_tokens", "llm.input_tokens", "llm.itl.max", "llm.itl.gaps", "llm.itl.gap_weights", "llm.slo.a.met", "llm.slo.a.violations",
	"llm.slo..met", "llm.slo.b.violations", "llm.slo.a.causes", "llm.slo.c.causes", "gen_ai.provider.name", "gen_ai.operation.name", "gen_ai.request.model"}

// FuzzConnector feeds spans with arbitrary values under the processor's
// keys (wrong types, NaN, negative, huge) and arbitrary events: the
// connector never panics, and its flush never emits a non-finite number.
func FuzzConnector(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("client server slo violations gaps"))
	f.Add([]byte{0, 1, 0, 0, 2, 1, 3, 7, 1, 0, 0, 0, 0, 0, 0, 0xf8, 0x7f, 11, 5, 12, 4})
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg := createDefaultConfig().(*Config)
		cfg.AggregationCardinalityLimit = 3
		cfg.Exemplars.Enabled = true
		c := newTestConnector(t, cfg, new(consumertest.MetricsSink))
		pick := func(n int) int {
			if len(data) == 0 {
				return 0
			}
			b := data[0]
			data = data[1:]
			return int(b) % n
		}
		u64 := func() uint64 {
			var buf [8]byte
			for i := range buf {
				buf[i] = byte(pick(256))
			}
			return binary.LittleEndian.Uint64(buf[:])
		}
		td := ptrace.NewTraces()
		spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
		for range 1 + pick(5) {
			s := spans.AppendEmpty()
			s.SetStartTimestamp(pcommon.Timestamp(u64()))
			s.SetEndTimestamp(pcommon.Timestamp(u64()))
			if pick(3) == 0 {
				s.Status().SetCode(ptrace.StatusCodeError)
			}
			// Tracestates: none, a valid threshold, extremes, malformed.
			s.TraceState().FromRaw([]string{"", "ot=th:8", "ot=th:ffffffffffffff", "ot=th:0", "ot=th:zz", "ot=th:" + strconv.FormatUint(u64(), 16)}[pick(6)])
			for range pick(12) {
				v := s.Attributes().PutEmpty(fuzzKeys[pick(len(fuzzKeys))])
				switch pick(9) {
				case 0:
					v.SetDouble(math.Float64frombits(u64()))
				case 1:
					v.SetInt(int64(u64()))
				case 2:
					v.SetStr([]string{"client", "server", "x", ""}[pick(4)])
				case 3:
					v.SetBool(pick(2) == 0)
				case 4:
					sl := v.SetEmptySlice()
					for range pick(5) {
						sl.AppendEmpty().SetDouble(math.Float64frombits(u64()))
					}
				case 5: // weights: ints, some huge or negative
					sl := v.SetEmptySlice()
					for range pick(5) {
						sl.AppendEmpty().SetInt(int64(u64()) >> pick(64))
					}
				case 6: // packed gaps: doubles of any bits, any length
					b := v.SetEmptyBytes()
					for range pick(5) {
						b.Append(binary.LittleEndian.AppendUint64(nil, u64())[:1+pick(8)]...)
					}
				case 7: // packed weights
					b := v.SetEmptyBytes()
					for range pick(5) {
						b.Append(binary.LittleEndian.AppendUint32(nil, uint32(u64()>>pick(64)))...)
					}
				default:
					sl := v.SetEmptySlice()
					sl.AppendEmpty().SetStr([]string{"ttft", "e2e", "ttft:queue", "e2e:output_length", "ttft:gpu", ":", "ttft:"}[pick(7)])
					sl.AppendEmpty().SetInt(3)
				}
			}
			for range pick(6) {
				e := s.Events().AppendEmpty()
				e.SetName("gen_ai.content.completion.chunk")
				e.SetTimestamp(pcommon.Timestamp(u64()))
			}
		}
		require.NoError(t, c.ConsumeTraces(context.Background(), td))
		md := c.collect(fixedNow.Add(time.Second))
		for _, rm := range md.ResourceMetrics().All() {
			for _, sm := range rm.ScopeMetrics().All() {
				for _, m := range sm.Metrics().All() {
					if m.Type() == 0 {
						continue
					}
					if m.Name() == metricSLOGoodput.name || m.Type().String() == "Gauge" {
						for _, dp := range m.Gauge().DataPoints().All() {
							require.False(t, math.IsNaN(dp.DoubleValue()) || math.IsInf(dp.DoubleValue(), 0), m.Name())
						}
					}
				}
			}
		}
	})
}
