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

	"github.com/llmslo/llmslo/tools/internal/otlpfile"
	"github.com/llmslo/llmslo/tools/internal/report/schema"
)

// Inputs are the files Run reads and how.
type Inputs struct {
	Paths []string
	otlpfile.ReadLimits
	// Warn, if not nil, gets each input read with a problem that left the
	// records before it intact (a truncated last record).
	Warn func(string)
}

// Run reads every input through a new Engine and returns the report.
// progress, if not nil, gets a line every interval once a run takes longer
// than that (bytes read, spans, requests).
func Run(ctx context.Context, opts Options, in Inputs, progress io.Writer, interval time.Duration) (*Report, error) {
	inputs := in.Paths
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
	runErr := ingest(ctx, e, in, &read)
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

// readAll reads every input into e on one core: a truncated input is a
// warning, any other error stops the run.
func readAll(ctx context.Context, e *Engine, in Inputs, read *atomic.Int64) error {
	rd := otlpfile.NewReader(in.ReadLimits)
	for _, path := range in.Paths {
		rd.Warn = skipWarning(path, in.Warn)
		err := rd.ReadFile(path, read, func(td ptrace.Traces) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			return e.Consume(ctx, td)
		})
		if err := inputError(path, err, in.Warn); err != nil {
			return err
		}
	}
	return nil
}

// Report is the report Run and Engine.Report return: schema.Report, whose
// package the renderers share with the engine.
type Report = schema.Report
