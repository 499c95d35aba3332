// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Run reads every input through a new Engine and returns the report.
// progress, if not nil, gets a line every interval once a run takes longer
// than that (bytes read, spans, requests).
func Run(ctx context.Context, opts Options, inputs []string, progress io.Writer, interval time.Duration) (*Report, error) {
	e, err := NewEngine(ctx, opts)
	if err != nil {
		return nil, err
	}
	var read atomic.Int64
	stop := make(chan struct{})
	done := make(chan struct{})
	start := time.Now()
	shown := false
	line := func() string {
		el := time.Since(start).Seconds()
		return fmt.Sprintf("llmslo report: %.1f MB read, %d spans, %d LLM requests, %.0f spans/s",
			float64(read.Load())/1e6, e.Spans(), e.Requests(), float64(e.Spans())/el)
	}
	go func() {
		defer close(done)
		if progress == nil || interval <= 0 {
			<-stop
			return
		}
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				fmt.Fprintln(progress, line())
				shown = true
			}
		}
	}()
	var runErr error
	for _, in := range inputs {
		err := ReadFile(in, &read, func(td ptrace.Traces) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			return e.Consume(ctx, td)
		})
		if err != nil {
			runErr = fmt.Errorf("%s: %w", in, err)
			break
		}
	}
	close(stop)
	<-done
	if err := e.Close(ctx); err != nil && runErr == nil {
		runErr = err
	}
	if runErr != nil {
		return nil, runErr
	}
	if shown {
		fmt.Fprintln(progress, line()+", done")
	}
	return e.Report(inputs), nil
}
