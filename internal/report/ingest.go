// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/llmslo/llmslo/internal/otlpfile"
)

// batchKey carries a worker's *batch through the processor to consume.
type batchKey struct{}

// job is one piece of an input on its way through a worker.
type job struct {
	piece otlpfile.Piece
	path  string
	b     batch
	err   error
	done  chan struct{}
}

// workers is how many pieces are decoded and processed at once: one per
// core (Options.Workers), or one when the trace assembly holds spans across
// pieces, whose order a second worker would change.
func (e *Engine) workers() int {
	if e.opts.Processor.Assembles {
		return 1
	}
	return e.cores()
}

// cores is Options.Workers, or one per core (GOMAXPROCS).
func (e *Engine) cores() int {
	if e.opts.Workers > 0 {
		return e.opts.Workers
	}
	return runtime.GOMAXPROCS(0)
}

// ingest reads every input into e. With more than one worker, the pieces
// are decoded, run through the processor and read into rows on every core,
// and applied to the engine in input order by one goroutine, so the report
// is the one a single core computes. A truncated input is a warning; any
// other error stops the run, the first in input order returned.
func ingest(ctx context.Context, e *Engine, in Inputs, read *atomic.Int64) error {
	n := e.workers()
	if n <= 1 {
		return readAll(ctx, e, in, read)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	work := make(chan *job, n)
	order := make(chan *job, 2*n) // bounds the pieces in flight
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for j := range work {
				e.runJob(ctx, j)
			}
		})
	}
	applied := make(chan error, 1)
	go func() { applied <- e.applyInOrder(order, cancel) }()
	readErr := readPieces(ctx, in, read, func(path string, p otlpfile.Piece) {
		j := &job{piece: p.Keep(), path: path, done: make(chan struct{})}
		order <- j
		work <- j
	})
	close(work)
	close(order)
	wg.Wait()
	if err := <-applied; err != nil {
		return err // the first failed piece precedes whatever stopped the reading
	}
	return readErr
}

// runJob decodes a piece and runs it through the processor into its rows.
func (e *Engine) runJob(ctx context.Context, j *job) {
	defer close(j.done)
	if ctx.Err() != nil {
		return // an earlier piece failed: its error is the run's
	}
	td, err := j.piece.Decode()
	if err == nil {
		e.spans.Add(int64(td.SpanCount()))
		err = e.proc.ConsumeTraces(context.WithValue(ctx, batchKey{}, &j.b), td)
	}
	if err != nil {
		j.err = fmt.Errorf("%s: %w", j.path, j.piece.Wrap(err))
	}
}

// applyInOrder applies the jobs' rows as they finish, in input order; at
// the first failed job it stops the run and drains the rest.
func (e *Engine) applyInOrder(order <-chan *job, stop context.CancelFunc) error {
	var first error
	for j := range order {
		<-j.done
		if first == nil && j.err != nil {
			first = j.err
			stop()
		}
		if first != nil {
			continue
		}
		e.mu.Lock()
		e.applyAll(&j.b)
		e.mu.Unlock()
	}
	return first
}

// readPieces hands every piece of every input to fn, in input order.
func readPieces(ctx context.Context, in Inputs, read *atomic.Int64, fn func(path string, p otlpfile.Piece)) error {
	rd := otlpfile.NewReader(in.ReadLimits)
	for _, path := range in.Paths {
		err := rd.ReadFilePieces(path, read, func(p otlpfile.Piece) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			fn(path, p)
			return nil
		})
		if err := inputError(path, err, in.Warn); err != nil {
			if errors.Is(err, context.Canceled) && ctx.Err() != nil {
				return nil // stopped by a failed piece, whose error is the run's
			}
			return err
		}
	}
	return nil
}

// inputError is the run's error for an input read with err: nil for a
// truncated input, which is a warning.
func inputError(path string, err error, warn func(string)) error {
	var trunc *otlpfile.TruncatedError
	if errors.As(err, &trunc) {
		if warn != nil {
			warn(fmt.Sprintf("%s: %v", path, err))
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
