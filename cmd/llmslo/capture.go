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
	var (
		listen, out string
		asJSON      bool
		duration    time.Duration
	)
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
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return fmt.Errorf("--out is required")
			}
			f, err := os.Create(out)
			if err != nil {
				return err
			}
			var w io.Writer = f
			var zw *gzip.Writer
			if strings.HasSuffix(out, ".gz") {
				zw = gzip.NewWriter(f)
				w = zw
			}
			c, err := report.NewCapture(listen, w, asJSON)
			if err != nil {
				_ = f.Close()
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "llmslo capture: receiving OTLP/HTTP traces on http://%s/v1/traces into %s\n", c.Addr(), out)
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if duration > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, duration)
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
			if ferr := f.Close(); err == nil {
				err = ferr
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "llmslo capture: %d requests, %d spans written to %s\n", c.Requests(), c.Spans(), out)
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&listen, "listen", "127.0.0.1:4320", "address to listen on")
	fl.StringVarP(&out, "out", "o", "", "file to write (.gz: gzip-compressed)")
	fl.BoolVar(&asJSON, "json", false, "write OTLP/JSON lines instead of length-prefixed protobuf")
	fl.DurationVar(&duration, "duration", 0, "stop after this long (default: until interrupted)")
	return cmd
}
