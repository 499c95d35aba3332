// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package otlpfile

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// trickle opens a connection that sends the headers of a request of size
// bytes, then sent bytes at once, then one byte every 200 ms until ctx
// ends; it returns the connection.
func trickle(ctx context.Context, t *testing.T, addr string, size, sent int) net.Conn {
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	_, err = fmt.Fprintf(conn, "POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\nContent-Length: %d\r\n\r\n", size)
	require.NoError(t, err)
	_, err = conn.Write(bytes.Repeat([]byte{0x0a}, sent))
	require.NoError(t, err)
	go func() {
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if _, err := conn.Write([]byte{0x0a}); err != nil {
					return
				}
			}
		}
	}()
	return conn
}

// TestCaptureSlowSendersHoldNoSlot: eight connections trickling a byte at
// a time take none of the four request slots, so a normal client is
// answered 200; one that sent more than the prefetch and then trickles
// holds its slot for about slotGrace, then is answered 408. Before, the
// eight took every slot for the read timeout and the normal client got
// 503.
func TestCaptureSlowSendersHoldNoSlot(t *testing.T) {
	ff := &failingFile{}
	c, err := NewCapture("127.0.0.1:0", NewCaptureFile(ff, 0, false, false, false), CaptureOptions{})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	var conns []net.Conn
	defer func() {
		cancel()
		for _, conn := range conns {
			_ = conn.Close() // else Close waits out their read timeout
		}
		require.NoError(t, c.Close(context.Background()))
	}()
	for range 8 {
		conns = append(conns, trickle(ctx, t, c.Addr(), 100_000, 1))
	}
	time.Sleep(300 * time.Millisecond) // the eight are in their handlers
	post(t, c.Addr(), oneSpan(1))

	slow := trickle(ctx, t, c.Addr(), 1<<20, slotPrefetch+1000)
	require.NoError(t, slow.SetReadDeadline(time.Now().Add(time.Minute)))
	resp, err := http.ReadResponse(bufio.NewReader(slow), nil)
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusRequestTimeout, resp.StatusCode)
	post(t, c.Addr(), oneSpan(2))
	assert.Equal(t, 2, spansInBuffer(t, ff))
}

func spansInBuffer(t *testing.T, ff *failingFile) int {
	n := 0
	require.NoError(t, Read(bytes.NewReader(ff.Bytes()), nil, func(td ptrace.Traces) error { n += td.SpanCount(); return nil }))
	return n
}
