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

	"github.com/llmslo/llmslo/tools/internal/otlpfile"
)

// batchKey carries a worker's *batch through the processor to consume.
type batchKey struct{}

// job is one piece of an input on its way through a worker. Once applied
// it is reused for a later piece, with its buffers (recycle).
type job struct {
	piece otlpfile.Piece
	msg   []byte // the piece's copy of its bytes
	path  string
	b     batch
	err   error
	// warn gets skipped, the warning of a piece that does not decode, in
	// input order; nil: such a piece fails the run.
	warn    func(string)
	skipped string
	done    chan struct{}
}

// jobs recycles the jobs applied: the pieces' copies and rows are the
// largest allocations of a parallel read, and the reuse keeps them off the
// collector's work.
type jobs chan *job

// next is an applied job made ready for piece p of path, or a new one.
func (js jobs) next(path string, p otlpfile.Piece) *job {
	var j *job
	select {
	case j = <-js:
		j.b.reset()
		j.err, j.skipped = nil, ""
	default:
		j = &job{}
	}
	j.piece, j.msg = p.KeepIn(j.msg)
	j.path, j.done = path, make(chan struct{})
	return j
}

// recycle offers an applied job for reuse.
func (js jobs) recycle(j *job) {
	select {
	case js <- j:
	default:
	}
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
	free := make(jobs, 3*n) // as many as can be in flight
	applied := make(chan error, 1)
	go func() { applied <- e.applyInOrder(order, free, cancel) }()
	readErr := readPieces(ctx, in, read, func(path string, p otlpfile.Piece) {
		j := free.next(path, p)
		j.warn = in.Warn
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
	if errors.Is(err, otlpfile.ErrMalformed) && j.warn != nil {
		j.skipped = fmt.Sprintf("%s: %v: skipped", j.path, j.piece.Wrap(err))
		return
	}
	if err == nil {
		e.spans.Add(int64(td.SpanCount()))
		err = e.proc.ConsumeTraces(context.WithValue(ctx, batchKey{}, &j.b), td)
	}
	if err != nil {
		j.err = fmt.Errorf("%s: %w", j.path, j.piece.Wrap(err))
	}
}

// applyInOrder applies the jobs' rows as they finish, in input order, and
// recycles them into free; at the first failed job it stops the run and
// drains the rest.
func (e *Engine) applyInOrder(order <-chan *job, free jobs, stop context.CancelFunc) error {
	var first error
	for j := range order {
		<-j.done
		if first == nil && j.err != nil {
			first = j.err
			stop()
		}
		if first == nil && j.skipped != "" {
			j.warn(j.skipped)
		}
		if first == nil {
			e.mu.Lock()
			e.applyAll(&j.b)
			e.mu.Unlock()
		}
		free.recycle(j)
	}
	return first
}

// readPieces hands every piece of every input to fn, in input order.
func readPieces(ctx context.Context, in Inputs, read *atomic.Int64, fn func(path string, p otlpfile.Piece)) error {
	rd := otlpfile.NewReader(in.ReadLimits)
	for _, path := range in.Paths {
		rd.Warn = skipWarning(path, in.Warn)
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

// skipWarning is the warning of a record of path skipped, nil without warn.
func skipWarning(path string, warn func(string)) func(string) {
	if warn == nil {
		return nil
	}
	return func(s string) { warn(path + ": " + s) }
}
