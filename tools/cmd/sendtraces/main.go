// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

// Command sendtraces sends trace files to a collector over OTLP/gRPC and,
// with -receive, waits for the collector to export them back over OTLP/HTTP
// and prints the llm.* attributes the llm_slo processor wrote on each span.
//
//	sendtraces -endpoint 127.0.0.1:4317 -receive 127.0.0.1:4319 testdata/traces/vllm/input.yaml ...
//
// Trace files are OTLP JSON, or the same structure in YAML (the golden-file
// format of this repository's tests).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmslo/llmslo/internal/contract"
	"github.com/llmslo/llmslo/internal/otlpio"
	"github.com/llmslo/llmslo/tools/internal/termtext"
)

func main() {
	endpoint := flag.String("endpoint", "127.0.0.1:4317", "collector OTLP/gRPC endpoint")
	receive := flag.String("receive", "", "if set, listen here for the collector's OTLP/HTTP export and print the enriched spans")
	timeout := flag.Duration("timeout", 30*time.Second, "how long to wait for the collector")
	shift := flag.Bool("shift-to-now", true, "move all timestamps so the newest span ends now (relative timing is kept exactly)")
	width := flag.Int("width", termtext.Auto, "fit the table to this many columns: a wider one switches to a narrower layout (0: unlimited; "+
		"default: the terminal's width, else $COLUMNS, else 120)")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: sendtraces [flags] FILE...")
		flag.PrintDefaults()
		os.Exit(2)
	}
	w := termtext.Detect(*width, os.Stdout, os.Getenv)
	if err := run(*endpoint, *receive, *timeout, *shift, w, flag.Args(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "sendtraces:", err)
		os.Exit(1)
	}
}

func run(endpoint, receive string, timeout time.Duration, shift bool, width int, files []string, out io.Writer) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var recv *otlpio.Receiver
	if receive != "" {
		var err error
		if recv, err = otlpio.NewReceiver(receive); err != nil {
			return err
		}
		defer recv.Close()
	}
	sender, err := otlpio.NewSender(endpoint)
	if err != nil {
		return err
	}
	defer sender.Close()

	sent := 0
	for _, f := range files {
		td, err := golden.ReadTraces(f)
		if err != nil {
			return fmt.Errorf("read %s: %w", f, err)
		}
		if shift {
			shiftToNow(td)
		}
		if err := sender.Send(ctx, td); err != nil {
			return err
		}
		sent += td.SpanCount()
	}
	fmt.Fprintf(out, "sent %d spans from %d files to %s\n", sent, len(files), endpoint)
	if recv == nil {
		return nil
	}
	if err := recv.WaitSpans(ctx, sent); err != nil {
		return err
	}
	printTable(out, recv.Traces(), width)
	return nil
}

// shiftToNow moves every timestamp of td by the same amount so that the
// latest span end is now.
func shiftToNow(td ptrace.Traces) {
	var latest pcommon.Timestamp
	otlpio.Spans(td, func(_ ptrace.ResourceSpans, s ptrace.Span) { latest = max(latest, s.EndTimestamp()) })
	if latest == 0 {
		return
	}
	d := pcommon.NewTimestampFromTime(time.Now()) - latest
	move := func(t pcommon.Timestamp) pcommon.Timestamp {
		if t == 0 {
			return 0
		}
		return t + d
	}
	otlpio.Spans(td, func(_ ptrace.ResourceSpans, s ptrace.Span) {
		s.SetStartTimestamp(move(s.StartTimestamp()))
		s.SetEndTimestamp(move(s.EndTimestamp()))
		for i := 0; i < s.Events().Len(); i++ {
			e := s.Events().At(i)
			e.SetTimestamp(move(e.Timestamp()))
		}
	})
}

func ms(a pcommon.Map, key string) string {
	v, ok := a.Get(key)
	if !ok {
		return "-"
	}
	return fmt.Sprintf("%.2fms", v.Double()*1000)
}

func str(a pcommon.Map, key string) string {
	v, ok := a.Get(key)
	if !ok {
		return ""
	}
	return v.AsString()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// verdicts renders "name=met", "name=violated[ttft]", "name=unknown[ttft:unknown]".
func verdicts(a pcommon.Map) string {
	keys := contract.NewKeys(contract.DefaultPrefix)
	var out []string
	for k, v := range a.All() {
		name, isMet, ok := keys.ParseSLOKey(k)
		if !ok {
			continue
		}
		switch {
		case isMet && v.Bool():
			out = append(out, name+"=met")
		case isMet:
			out = append(out, name+"=violated"+str(a, keys.SLOViolations(name)))
		default:
			if _, decided := a.Get(keys.SLOMet(name)); !decided {
				out = append(out, name+"=unknown"+v.AsString())
			}
		}
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}
