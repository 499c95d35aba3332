// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/llmslo/llmslo/internal/report"
)

// newCaptureCommand is `llmslo capture`: an OTLP/HTTP receiver that writes
// what a collector's otlphttp exporter sends to a file for llmslo report.
func newCaptureCommand() *cobra.Command {
	var f captureFlags
	cmd := &cobra.Command{
		Use:   "capture --out FILE [--listen ADDR]",
		Short: "Receive OTLP/HTTP traces (from a collector's otlphttp exporter) into a file for llmslo report",
		Long: `Listens for OTLP/HTTP trace exports (POST /v1/traces, protobuf or JSON, gzip or not) and
appends each request to FILE as length-prefixed protobuf (the collector's file exporter format),
or as OTLP/JSON lines with --json; FILE ending in .gz is gzip-compressed. Runs until
interrupted (SIGINT/SIGTERM) or for --duration. In the collector:

  exporters:
    otlphttp/capture:
      endpoint: http://127.0.0.1:4320
  service.pipelines.traces.exporters: [..., otlphttp/capture]`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runCapture(cmd, &f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.listen, "listen", "127.0.0.1:4320", "address to listen on")
	fl.StringVarP(&f.out, "out", "o", "", "file to write (.gz: gzip-compressed)")
	fl.BoolVar(&f.asJSON, "json", false, "write OTLP/JSON lines instead of length-prefixed protobuf")
	fl.DurationVar(&f.duration, "duration", 0, "stop after this long (default: until interrupted)")
	return cmd
}

type captureFlags struct {
	listen, out string
	asJSON      bool
	duration    time.Duration
}

func runCapture(cmd *cobra.Command, f *captureFlags) error {
	if f.out == "" {
		return fmt.Errorf("--f.out is required")
	}
	file, err := os.Create(f.out)
	if err != nil {
		return err
	}
	var w io.Writer = file
	var zw *gzip.Writer
	if strings.HasSuffix(f.out, ".gz") {
		zw = gzip.NewWriter(file)
		w = zw
	}
	c, err := report.NewCapture(f.listen, w, f.asJSON)
	if err != nil {
		_ = file.Close()
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "llmslo capture: receiving OTLP/HTTP traces on http://%s/v1/traces into %s\n", c.Addr(), f.out)
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
	if zw != nil {
		if zerr := zw.Close(); err == nil {
			err = zerr
		}
	}
	if ferr := file.Close(); err == nil {
		err = ferr
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "llmslo capture: %d requests, %d spans written to %s\n", c.Requests(), c.Spans(), f.out)
	return err
}
