// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/llmslo/llmslo/tools/internal/otlpfile"
)

// newCaptureCommand is `llmslo capture`: an OTLP/HTTP receiver that writes
// what a collector's otlp_http exporter sends to a file for llmslo otlpfile.
func newCaptureCommand() *cobra.Command {
	var f captureFlags
	cmd := &cobra.Command{
		Use:   "capture --out FILE [--listen ADDR]",
		Short: "Receive OTLP/HTTP traces (from a collector's otlp_http exporter) into a file for llmslo report",
		Long: `Listens for OTLP/HTTP trace exports (POST /v1/traces, protobuf or JSON, gzip or not) and
appends each request to FILE as length-prefixed protobuf (the collector's file exporter format),
or as OTLP/JSON lines with --json; FILE ending in .gz holds one gzip member per request. A request
is answered 200 only once it is in FILE as a complete record, so a killed capture loses nothing it
acknowledged; a failed write (a full disk) is answered 503, which the exporter retries, and leaves
no partial record. An existing FILE is appended to, never truncated, and locked while capture runs
(a second capture on it is refused). A request whose one span, resource or scope holds more than
262,144 entries (attributes, events, links, values) is answered 413. A request takes one of
--max-concurrent slots only once 32 KiB of its body (or all of it) arrived; then the time spent
waiting for the rest may not pass 2 s plus 1 s per 32 KiB received, or it gets 408. Runs until interrupted (SIGINT/SIGTERM) or for --duration. In the collector:

  exporters:
    otlp_http/capture:
      endpoint: http://127.0.0.1:4320
  service.pipelines.traces.exporters: [..., otlp_http/capture]`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runCapture(cmd, &f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.listen, "listen", "127.0.0.1:4320", "address to listen on")
	fl.StringVarP(&f.out, "out", "o", "", "file to append to (.gz: gzip-compressed)")
	fl.BoolVar(&f.asJSON, "json", false, "write OTLP/JSON lines instead of length-prefixed protobuf")
	fl.DurationVar(&f.duration, "duration", 0, "stop after this long (default: until interrupted)")
	fl.BoolVar(&f.fsync, "fsync", false, "sync the file to disk before acknowledging each request (survives a power loss, not only a kill)")
	fl.Int64Var(&f.opts.MaxRequestBytes, "max-request-bytes", otlpfile.DefaultMaxRequestBytes, "largest request, decoded; larger ones are answered 413")
	fl.IntVar(&f.opts.MaxConcurrent, "max-concurrent", otlpfile.DefaultMaxConcurrent, "requests decoded and written at once (a request takes a slot once 32 KiB of its body arrived); others wait up to 5 s, then get 503")
	fl.DurationVar(&f.opts.ReadTimeout, "read-timeout", otlpfile.DefaultReadTimeout, "longest time to read one request")
	return cmd
}

type captureFlags struct {
	listen, out   string
	asJSON, fsync bool
	duration      time.Duration
	opts          otlpfile.CaptureOptions
}

func runCapture(cmd *cobra.Command, f *captureFlags) error {
	if f.out == "" {
		return fmt.Errorf("--out is required: the file to append the traces to")
	}
	stderr := cmd.ErrOrStderr()
	file, note, err := otlpfile.OpenCaptureFile(f.out, f.asJSON, f.fsync)
	if err != nil {
		return err
	}
	if note != "" {
		fmt.Fprintf(stderr, "llmslo capture: %s\n", note)
	}
	f.opts.Warn = func(s string) { fmt.Fprintf(stderr, "llmslo capture: %s\n", s) }
	c, err := otlpfile.NewCapture(f.listen, file, f.opts)
	if err != nil {
		_ = file.Close()
		return err
	}
	fmt.Fprintf(stderr, "llmslo capture: receiving OTLP/HTTP traces on http://%s/v1/traces into %s\n", c.Addr(), f.out)
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if f.duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, f.duration)
		defer cancel()
	}
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = c.Close(sctx)
	if ferr := file.Close(); err == nil {
		err = ferr
	}
	fmt.Fprintf(stderr, "llmslo capture: %d requests, %d spans written to %s\n", c.Requests(), c.Spans(), f.out)
	return err
}
