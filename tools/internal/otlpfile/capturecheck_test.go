// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package otlpfile

import (
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// captureFormats are the files llmslo capture writes: the name (.gz:
// gzip) and --json.
var captureFormats = []struct {
	name   string
	asJSON bool
}{
	{"traces.pb", false}, {"traces.pb.gz", false}, {"traces.jsonl", true}, {"traces.jsonl.gz", true},
}

// noisyRequest is request i: 32 spans, each with 256 random hex digits,
// so that gzip leaves it about half its size and a .gz file grows as fast
// as a plain one.
func noisyRequest(rng *rand.Rand, i int) ptrace.Traces {
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	noise := make([]byte, 128)
	for k := range 32 {
		s := spans.AppendEmpty()
		s.SetName("chat m")
		s.SetTraceID(pcommon.TraceID{byte(i >> 16), byte(i >> 8), byte(i), byte(k)})
		s.SetSpanID(pcommon.SpanID{byte(i >> 16), byte(i >> 8), byte(i), byte(k)})
		for j := range noise {
			noise[j] = byte(rng.Uint32())
		}
		s.Attributes().PutStr("noise", hex.EncodeToString(noise))
	}
	return td
}

// writeCapture appends requests to a capture file at path, as llmslo
// capture does, until it holds at least size bytes; it returns the
// requests written and where the last one starts.
func writeCapture(t *testing.T, path string, asJSON bool, size int64) (int, int64) {
	file, _, err := OpenCaptureFile(path, asJSON, false)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(1, 2))
	n, last := 0, int64(0)
	for ; file.Size() < size; n++ {
		last = file.Size()
		body, err := ptraceotlp.NewExportRequestFromTraces(noisyRequest(rng, n)).MarshalProto()
		require.NoError(t, err)
		rec, _, err := encodeRecord(body, false, asJSON)
		require.NoError(t, err)
		require.NoError(t, file.Append(rec))
	}
	require.NoError(t, file.Close())
	return n, last
}

// TestCaptureRestartKeepsLargeFile: a capture restarted on a file of
// several MiB, far more than one read of the check, keeps every byte of
// it in every format, and cuts exactly a partial record added after.
// Before, the check of OTLP/JSON lines advanced its offset by only the
// bytes after each read's last newline, so a restart cut a --json file
// of 3 MB by about 530 KB of acknowledged requests.
func TestCaptureRestartKeepsLargeFile(t *testing.T) {
	const size = 3 << 20 // three reads of the check
	for _, f := range captureFormats {
		t.Run(f.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), f.name)
			n, last := writeCapture(t, path, f.asJSON, size)
			st, err := os.Stat(path)
			require.NoError(t, err)
			require.GreaterOrEqual(t, st.Size(), int64(size))
			for restart := range 3 {
				file, note, err := OpenCaptureFile(path, f.asJSON, false)
				require.NoError(t, err, "restart %d", restart)
				assert.Equal(t, st.Size(), file.Size(), "restart %d: the end of the complete records", restart)
				assert.NotContains(t, note, "cut", "restart %d", restart)
				require.NoError(t, file.Close())
				after, err := os.Stat(path)
				require.NoError(t, err)
				assert.Equal(t, st.Size(), after.Size(), "restart %d: bytes kept", restart)
			}
			assert.Equal(t, n*32, spansIn(t, path))

			// A record cut short (a kill inside a write) is cut off, and
			// only it.
			whole, err := os.ReadFile(path)
			require.NoError(t, err)
			tail := whole[last:] // the last record, written again and cut
			require.NoError(t, os.WriteFile(path, append(whole, tail[:len(tail)/2]...), 0o600))
			file, note, err := OpenCaptureFile(path, f.asJSON, false)
			require.NoError(t, err)
			assert.Equal(t, st.Size(), file.Size())
			assert.Contains(t, note, "cut off")
			require.NoError(t, file.Close())
			assert.Equal(t, n*32, spansIn(t, path))
		})
	}
}

// TestRecordScannerChunks: the end of the last complete record does not
// depend on how the file is cut into reads.
func TestRecordScannerChunks(t *testing.T) {
	lines := strings.Repeat(`{"resourceSpans":[]}`+"\n", 1000) + `{"resourceSpans":[{"sc`
	var delimited []byte
	for range 1000 {
		delimited = AppendDelimited(delimited, []byte{0x0a, 0x00})
	}
	full := len(delimited)
	delimited = append(delimited, 0, 0, 0, 9, 0x0a)
	for _, chunk := range []int{1, 7, 4096, 1 << 20} {
		for _, c := range []struct {
			name string
			json bool
			in   []byte
			end  int64
		}{
			{"lines", true, []byte(lines), int64(strings.LastIndexByte(lines, '\n') + 1)},
			{"delimited", false, delimited, int64(full)},
		} {
			sc := &recordScanner{json: c.json}
			for p := c.in; len(p) > 0; p = p[min(chunk, len(p)):] {
				_, err := sc.Write(p[:min(chunk, len(p))])
				require.NoError(t, err)
			}
			assert.Equal(t, c.end, sc.end, "%s in reads of %d", c.name, chunk)
			assert.Equal(t, int64(len(c.in)), sc.off, "%s in reads of %d", c.name, chunk)
			assert.Equal(t, 1000, sc.complete, "%s in reads of %d", c.name, chunk)
			assert.NoError(t, sc.check(true))
		}
	}
}

// TestCaptureRestartsOverCutGzip: a .gz capture whose last member is cut
// short anywhere (a kill at a page boundary, a power loss without
// --fsync) restarts, cut back to its last complete member, as llmslo
// report reads it; a file of one gzip stream cut after complete records
// (not written by a capture) is refused, not cut. Before, a cut header or
// a missing trailer refused the restart.
func TestCaptureRestartsOverCutGzip(t *testing.T) {
	for _, f := range captureFormats {
		if !strings.HasSuffix(f.name, ".gz") {
			continue
		}
		for _, c := range []struct {
			name string
			cut  func(member []byte) []byte
		}{
			{"header_cut", func(m []byte) []byte { return m[:5] }},
			{"one_byte", func(m []byte) []byte { return m[:1] }},
			{"data_cut", func(m []byte) []byte { return m[:len(m)/2] }},
			{"no_trailer", func(m []byte) []byte { return m[:len(m)-8] }},
			{"half_trailer", func(m []byte) []byte { return m[:len(m)-4] }},
		} {
			t.Run(f.name+"/"+c.name, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), f.name)
				n, last := writeCapture(t, path, f.asJSON, 64<<10)
				whole, err := os.ReadFile(path)
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(path, append(whole, c.cut(whole[last:])...), 0o600))
				file, note, err := OpenCaptureFile(path, f.asJSON, false)
				require.NoError(t, err)
				assert.Equal(t, int64(len(whole)), file.Size())
				assert.Contains(t, note, "cut off")
				rec, _, err := encodeRecord(requestBytes(t, oneSpan(7)), false, f.asJSON)
				require.NoError(t, err)
				require.NoError(t, file.Append(rec))
				require.NoError(t, file.Close())
				assert.Equal(t, n*32+1, spansIn(t, path))
			})
		}
		t.Run(f.name+"/one_stream", func(t *testing.T) {
			path := filepath.Join(t.TempDir(), f.name)
			var plain []byte
			for i := range 3 {
				rec, _, err := encodeRecord(requestBytes(t, oneSpan(byte(i))), false, f.asJSON)
				require.NoError(t, err)
				plain = append(plain, rec...)
			}
			var zb bytes.Buffer
			zw := gzip.NewWriter(&zb)
			_, _ = zw.Write(plain)
			require.NoError(t, zw.Close())
			require.NoError(t, os.WriteFile(path, zb.Bytes()[:zb.Len()-4], 0o600))
			_, _, err := OpenCaptureFile(path, f.asJSON, false)
			require.ErrorContains(t, err, "gzip member at byte 0: unexpected EOF: not appending to it")
		})
	}
}

func requestBytes(t *testing.T, td ptrace.Traces) []byte {
	b, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	require.NoError(t, err)
	return b
}

// TestCaptureFileLocked: a second capture on a file another one writes is
// refused with a clear error, and takes the file once the first is
// closed. Before, both appended, and on a full disk each cut the file to
// its own end, leaving holes of zeros.
func TestCaptureFileLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "traces.pb")
	first, _, err := OpenCaptureFile(path, false, false)
	require.NoError(t, err)
	_, _, err = OpenCaptureFile(path, false, false)
	require.ErrorIs(t, err, ErrLocked)
	assert.Equal(t, path+": "+ErrLocked.Error(), err.Error())
	require.NoError(t, first.Close())
	again, _, err := OpenCaptureFile(path, false, false)
	require.NoError(t, err)
	require.NoError(t, again.Close())
}
