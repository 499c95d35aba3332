// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bombEntries is how many empty entries a bomb holds: 66 MB of 2-byte
// fields, under capture's 64 MiB request limit, about 64 KB gzipped.
const bombEntries = 33_000_000

// budgetBombs are requests of one resource with bombEntries empty
// attributes, and of one span with bombEntries empty events, encoded by
// hand, and the unit each is refused for.
func budgetBombs() []struct {
	name, where string
	msg         []byte
} {
	wrap := func(tag byte, b ...[]byte) []byte {
		v := bytes.Join(b, nil)
		return append(binary.AppendUvarint([]byte{tag}, uint64(len(v))), v...)
	}
	attrs := bytes.Repeat([]byte{0x0a, 0x00}, bombEntries)  // Resource.attributes
	events := bytes.Repeat([]byte{0x5a, 0x00}, bombEntries) // Span.events
	return []struct {
		name, where string
		msg         []byte
	}{
		{"resource_attributes", "resource 1", wrap(0x0a, wrap(0x0a, attrs), wrap(0x12, wrap(0x12)))},
		{"span_events", "resource 1 scope 1 span 1", wrap(0x0a, wrap(0x12, wrap(0x12, events)))},
	}
}

func gzipped(t *testing.T, b []byte) []byte {
	var zb bytes.Buffer
	zw, err := gzip.NewWriterLevel(&zb, gzip.BestCompression)
	require.NoError(t, err)
	_, err = zw.Write(b)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return zb.Bytes()
}

// TestBudgetBombs: the 64 KB gzip requests whose one resource holds 33 M
// empty attributes, or whose one span holds 33 M empty events, are
// answered 413 with the reason by `llmslo capture` and skipped with a
// warning naming them by `llmslo report`, which reads the records around
// them, each within 512 MiB of peak RSS. Before, capture answered them 200
// at 4.9-5.2 GB (2.4 GB for the events) and wrote them to its file, and
// report took 5.6 GB.
func TestBudgetBombs(t *testing.T) {
	bin, err := buildCLI()
	require.NoError(t, err)
	good := requestBytes(t, engineSpans(3, func(int) string { return "m" }, 0.1))
	for _, b := range budgetBombs() {
		body := gzipped(t, b.msg)
		t.Run("capture/"+b.name, func(t *testing.T) {
			c := startKilledCapture(t, filepath.Join(t.TempDir(), "traces.pb"))
			req, err := http.NewRequest(http.MethodPost, c.url, bytes.NewReader(body)) //nolint:noctx // a test's client
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/x-protobuf")
			req.Header.Set("Content-Encoding", "gzip")
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			msg, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			rss := peakRSSMiB(t, c.cmd.Process.Pid)
			t.Logf("%d bytes of gzip: %s %q, peak RSS %.0f MiB", len(body), resp.Status, strings.TrimSpace(string(msg)), rss)
			assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
			assert.Contains(t, string(msg), b.where+" holds more than 262144 entries")
			assert.Less(t, rss, 512.0)
			ok, err := c.post(killRequest(1, 0, 3))
			require.NoError(t, err)
			assert.True(t, ok, "a normal request after it")
		})
		t.Run("capture_four_at_once/"+b.name, func(t *testing.T) {
			// --max-concurrent's 4 at once, each answered 413 for its
			// budget: none 408, whose pace leaves out the time capture
			// itself spends decompressing.
			c := startKilledCapture(t, filepath.Join(t.TempDir(), "traces.pb"))
			codes := make([]int, 4)
			var wg sync.WaitGroup
			for i := range codes {
				wg.Go(func() {
					req, err := http.NewRequest(http.MethodPost, c.url, bytes.NewReader(body)) //nolint:noctx // a test's client
					if err != nil {
						return
					}
					req.Header.Set("Content-Type", "application/x-protobuf")
					req.Header.Set("Content-Encoding", "gzip")
					if resp, err := http.DefaultClient.Do(req); err == nil {
						_ = resp.Body.Close()
						codes[i] = resp.StatusCode
					}
				})
			}
			wg.Wait()
			rss := peakRSSMiB(t, c.cmd.Process.Pid)
			t.Logf("four at once: %v, peak RSS %.0f MiB", codes, rss)
			assert.Equal(t, []int{413, 413, 413, 413}, codes)
		})
		t.Run("report/"+b.name, func(t *testing.T) {
			var plain []byte
			for _, m := range [][]byte{good, b.msg, good} {
				plain = binary.BigEndian.AppendUint32(plain, uint32(len(m)))
				plain = append(plain, m...)
			}
			path := filepath.Join(t.TempDir(), "bomb.pb.gz")
			require.NoError(t, os.WriteFile(path, gzipped(t, plain), 0o600))
			out := filepath.Join(t.TempDir(), "report.json")
			cmd, peakRSS := launched(t, bin, "report", "--quiet", "--format", "json", "--out", out, path)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			require.NoError(t, cmd.Run(), stderr.String())
			_, rss := peakRSS()
			t.Logf("peak RSS %.0f MiB, stderr %q", rss, strings.TrimSpace(stderr.String()))
			assert.Equal(t, "llmslo report: warning: "+path+": OTLP protobuf message 2: "+b.where+
				" holds more than 262144 entries (attributes, events, links, array values; decoded whole, it is one piece): over the budget of a piece, refused: skipped\n", stderr.String())
			assert.Less(t, rss, 512.0)
			rep, err := os.ReadFile(out)
			require.NoError(t, err)
			assert.Regexp(t, `"spans":\s*6\b`, string(rep), "the 6 spans around the bomb")
		})
	}
}
