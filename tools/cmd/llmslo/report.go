// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	llmsloprocessor "github.com/llmslo/llmslo"
	"github.com/llmslo/llmslo/internal/contract"
	"github.com/llmslo/llmslo/tools/internal/otlpfile"
	"github.com/llmslo/llmslo/tools/internal/report"
	"github.com/llmslo/llmslo/tools/internal/report/render"
)

// newReportCommand is `llmslo report`: the SLO report from stored traces.
func newReportCommand() *cobra.Command {
	var f reportFlags
	cmd := &cobra.Command{
		Use:   "report [flags] INPUT...",
		Short: "SLO report from stored OTLP traces: goodput, exact percentiles, each benchmark tool's definitions",
		Long: `Reads OTLP trace files (OTLP/JSON, one export request per line or any sequence of
documents; OTLP protobuf, one request or length-prefixed messages; gzip; "-" for stdin),
runs every span through the llm_slo processor in-process (the configuration of --config's
llm_slo processor, else the processor's defaults), and reports per SLO and per group:
goodput with its 95% confidence interval, violations by constraint and combination, the
goodput attainable without each constraint, the SLO-scale sweep, exact latency percentiles,
TTFT/TPOT/ITL/E2E as vLLM, AIPerf/GenAI-Perf, LLMPerf, GuideLLM, SGLang, DistServe and
llmslo define them, the slowest requests with their trace and span IDs, and the capacity:
per SLO with an objective, goodput by the requests in flight on the replica when each
server-layer request started, the knee where it stops holding the objective, and the
replicas the observed peak needs.`,
		Example: `  llmslo report --config config/collector.yaml traces.jsonl
  llmslo report --slo 'interactive:ttft=500ms,tpot=15ms,e2e=2s' --format html --out report.html traces.pb.gz
  llmslo capture --listen 127.0.0.1:4320 --out traces.pb & ... ; llmslo report traces.pb`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runReport(cmd, args, &f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.configPath, "config", "", "collector configuration file: its llm_slo processor's settings are applied")
	fl.StringVar(&f.processorID, "processor", "", `which llm_slo processor of --config (e.g. "llm_slo/edge"); needed when it has several`)
	fl.StringArrayVar(&f.slos, "slo", nil, `an SLO to judge, added to the configuration's: "NAME:ttft=500ms,tpot=15ms,itl=..,e2e=..,queue_time=..,objective=99" (repeatable; objective in percent)`)
	fl.StringVar(&f.format, "format", "text", "text, markdown, json or html")
	fl.StringVarP(&f.out, "out", "o", "", "write the report to this file (default standard output)")
	fl.StringVar(&f.by, "by", strings.Join(report.DefaultBy, ","), `group dimensions: model, layer, preset, or any span/resource attribute key`)
	fl.Int64Var(&f.maxGaps, "max-gaps", 64<<20, "inter-token gaps kept for exact pooled ITL percentiles (8 bytes each); beyond it, a 1% sketch")
	fl.IntVar(&f.top, "top", 10, "slowest requests listed per metric")
	fl.IntVar(&f.maxGroups, "max-groups", report.DefaultMaxGroups, `groups reported, one of them "(other groups)" holding the requests of every group past the rest`)
	fl.StringVar(&f.capacityBy, "capacity-by", strings.Join(report.DefaultCapacityBy, ","), "resource attributes naming a server-layer request's replica for the capacity, the first present wins")
	fl.IntVar(&f.capacityMin, "capacity-min-requests", report.DefaultCapacityMinRequests, "fewest requests of a capacity load level: adjacent levels merge from the lowest until each has them")
	fl.IntVar(&f.workers, "workers", 0, "inputs' pieces decoded and processed at once (0: one per core); the report is the same for any number")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress lines on standard error")
	fl.Int64Var(&f.limits.MaxDecodedBytes, "max-decoded-bytes", otlpfile.DefaultMaxDecodedBytes, "bytes read after decompression, over all inputs, before giving up (a gzip bomb stops here)")
	fl.IntVar(&f.limits.MaxGzipDepth, "max-gzip-depth", otlpfile.DefaultMaxGzipDepth, "gzip layers inside one another")
	return cmd
}

type reportFlags struct {
	configPath, processorID, format, out, by string
	capacityBy                               string
	slos                                     []string
	maxGaps                                  int64
	top, maxGroups, workers, capacityMin     int
	quiet                                    bool
	limits                                   otlpfile.ReadLimits
}

func runReport(cmd *cobra.Command, args []string, f *reportFlags) error {
	if !slices.Contains([]string{"text", "markdown", "json", "html"}, f.format) {
		return fmt.Errorf("--format %q: allowed values are text, markdown, json, html", f.format)
	}
	if f.workers < 0 {
		return fmt.Errorf("--workers %d: must be 0 (one per core) or more", f.workers)
	}
	if f.maxGroups < 2 {
		return fmt.Errorf("--max-groups %d: must be at least 2 (one group and the overflow group)", f.maxGroups)
	}
	if f.capacityMin < 1 {
		return fmt.Errorf("--capacity-min-requests %d: must be at least 1 (1: no level merged)", f.capacityMin)
	}
	cfg, id, err := loadConfig(cmd, f.configPath, f.processorID)
	if err != nil {
		return err
	}
	for _, s := range f.slos {
		sc, err := parseSLO(s)
		if err != nil {
			return fmt.Errorf("--slo %q: %w", s, err)
		}
		cfg.SLOs = append(cfg.SLOs, sc)
	}
	if cfg.Parts == llmsloprocessor.PartsAuto {
		// The slowest misses show their parts whichever SLOs read them;
		// the report pays nothing per span a collector would.
		cfg.Parts = llmsloprocessor.PartsAlways
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	opts := report.Options{Processor: report.NewProcessor(llmsloprocessor.NewFactory(), cfg), ProcessorID: id, MaxGaps: f.maxGaps, Top: f.top, MaxGroups: f.maxGroups, Workers: f.workers}
	opts.By, opts.CapacityBy, opts.CapacityMinRequests = splitList(f.by), splitList(f.capacityBy), f.capacityMin
	if len(opts.CapacityBy) == 0 {
		return fmt.Errorf("--capacity-by: name at least one attribute (default %s)", strings.Join(report.DefaultCapacityBy, ","))
	}
	var progress io.Writer
	if !f.quiet {
		progress = cmd.ErrOrStderr()
	}
	if f.limits.MaxDecodedBytes <= 0 || f.limits.MaxGzipDepth <= 0 {
		return fmt.Errorf("--max-decoded-bytes and --max-gzip-depth must be positive (defaults %d and %d)", otlpfile.DefaultMaxDecodedBytes, otlpfile.DefaultMaxGzipDepth)
	}
	in := report.Inputs{Paths: args, ReadLimits: f.limits, Warn: func(s string) {
		fmt.Fprintln(cmd.ErrOrStderr(), "llmslo report: warning:", s)
	}}
	r, err := report.Run(cmd.Context(), opts, in, progress, 2*time.Second)
	if err != nil {
		return err
	}
	return writeReport(cmd, f, r)
}

// writeReport writes r in the chosen format to --out or standard output.
func writeReport(cmd *cobra.Command, f *reportFlags, r *report.Report) error {
	var err error
	w := cmd.OutOrStdout()
	var file *os.File
	if f.out != "" && f.out != "-" {
		if file, err = os.Create(f.out); err != nil {
			return err
		}
		w = file
	}
	bw := bufio.NewWriter(w)
	switch f.format {
	case "text":
		err = render.WriteText(bw, r)
	case "markdown":
		err = render.WriteMarkdown(bw, r)
	case "json":
		err = render.WriteJSON(bw, r)
	case "html":
		err = render.WriteHTML(bw, r)
	}
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	if file != nil {
		if cerr := file.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// loadConfig returns the processor configuration: the chosen llm_slo
// processor of a collector configuration, or the defaults.
func loadConfig(cmd *cobra.Command, path, id string) (*llmsloprocessor.Config, string, error) {
	if path == "" {
		if id != "" {
			return nil, "", fmt.Errorf("--processor needs --config")
		}
		return llmsloprocessor.NewFactory().CreateDefaultConfig().(*llmsloprocessor.Config), "", nil
	}
	procs, err := loadProcessors(cmd.Context(), path)
	if err != nil {
		return nil, "", err
	}
	var ids []string
	for _, p := range procs {
		ids = append(ids, p.ID.String())
		if p.ID.String() == id || id == "" && len(procs) == 1 {
			return p.Config, fmt.Sprintf("%s (%s)", p.ID, path), nil
		}
	}
	if id == "" {
		return nil, "", fmt.Errorf("%s has several llm_slo processors: choose one with --processor (%s)", path, strings.Join(ids, ", "))
	}
	return nil, "", fmt.Errorf("%s: no processor %q: it has %s", path, id, strings.Join(ids, ", "))
}

// splitList splits a comma-separated flag, blanks dropped.
func splitList(s string) []string {
	var out []string
	for _, d := range strings.Split(s, ",") {
		if d = strings.TrimSpace(d); d != "" {
			out = append(out, d)
		}
	}
	return out
}

// parseSLO parses "NAME:ttft=500ms,tpot=15ms,objective=99".
func parseSLO(s string) (llmsloprocessor.SLOConfig, error) {
	name, spec, ok := strings.Cut(s, ":")
	sc := llmsloprocessor.SLOConfig{Name: strings.TrimSpace(name)}
	if !ok || spec == "" {
		return sc, fmt.Errorf("want NAME:constraint=duration,... e.g. interactive:ttft=500ms,e2e=2s")
	}
	for _, part := range strings.Split(spec, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return sc, fmt.Errorf("%q: want constraint=duration", part)
		}
		if strings.TrimSpace(k) == "objective" {
			o, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				return sc, fmt.Errorf("objective: %q is not a number (a percentage, such as 99)", v)
			}
			sc.Objective = &o // the configuration's Validate checks the range
			continue
		}
		d, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil {
			return sc, fmt.Errorf("%s: %w", k, err)
		}
		// The configuration owns the name-to-field mapping, so the flag
		// takes every constraint the processor does.
		if !sc.SetThreshold(strings.TrimSpace(k), d) {
			return sc, fmt.Errorf("unknown constraint %q: allowed are %s", k, strings.Join(contract.Constraints[:], ", "))
		}
	}
	return sc, nil
}
