package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	llmsloprocessor "github.com/llmslo/llmslo"
	"github.com/llmslo/llmslo/internal/collectorconfig"
	"github.com/llmslo/llmslo/internal/report"
)

// newReportCommand is `llmslo report`: the SLO report from stored traces.
func newReportCommand() *cobra.Command {
	var (
		configPath, processorID, format, out, by string
		slos                                     []string
		maxGaps                                  int64
		top                                      int
		quiet                                    bool
	)
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
llmslo define them, and the slowest requests with their trace and span IDs.`,
		Example: `  llmslo report --config config/collector.yaml traces.jsonl
  llmslo report --slo 'interactive:ttft=500ms,tpot=15ms,e2e=2s' --format html --out report.html traces.pb.gz
  llmslo capture --listen 127.0.0.1:4320 --out traces.pb & ... ; llmslo report traces.pb`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !slices.Contains([]string{"text", "markdown", "json", "html"}, format) {
				return fmt.Errorf("--format %q: allowed values are text, markdown, json, html", format)
			}
			cfg, id, err := loadConfig(cmd, configPath, processorID)
			if err != nil {
				return err
			}
			for _, s := range slos {
				sc, err := parseSLO(s)
				if err != nil {
					return fmt.Errorf("--slo %q: %w", s, err)
				}
				cfg.SLOs = append(cfg.SLOs, sc)
			}
			if err := cfg.Validate(); err != nil {
				return err
			}
			opts := report.Options{Config: cfg, ProcessorID: id, MaxGaps: maxGaps, Top: top}
			for _, d := range strings.Split(by, ",") {
				if d = strings.TrimSpace(d); d != "" {
					opts.By = append(opts.By, d)
				}
			}
			var progress io.Writer
			if !quiet {
				progress = cmd.ErrOrStderr()
			}
			r, err := report.Run(cmd.Context(), opts, args, progress, 2*time.Second)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			var f *os.File
			if out != "" && out != "-" {
				if f, err = os.Create(out); err != nil {
					return err
				}
				w = f
			}
			bw := bufio.NewWriter(w)
			switch format {
			case "text":
				err = report.WriteText(bw, r)
			case "markdown":
				err = report.WriteMarkdown(bw, r)
			case "json":
				err = report.WriteJSON(bw, r)
			case "html":
				err = report.WriteHTML(bw, r)
			}
			if ferr := bw.Flush(); err == nil {
				err = ferr
			}
			if f != nil {
				if cerr := f.Close(); err == nil {
					err = cerr
				}
			}
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&configPath, "config", "", "collector configuration file: its llm_slo processor's settings are applied")
	fl.StringVar(&processorID, "processor", "", `which llm_slo processor of --config (e.g. "llm_slo/edge"); needed when it has several`)
	fl.StringArrayVar(&slos, "slo", nil, `an SLO to judge, added to the configuration's: "NAME:ttft=500ms,tpot=15ms,itl=..,e2e=..,queue_time=.." (repeatable)`)
	fl.StringVar(&format, "format", "text", "text, markdown, json or html")
	fl.StringVarP(&out, "out", "o", "", "write the report to this file (default standard output)")
	fl.StringVar(&by, "by", strings.Join(report.DefaultBy, ","), `group dimensions: model, layer, preset, or any span/resource attribute key`)
	fl.Int64Var(&maxGaps, "max-gaps", 64<<20, "inter-token gaps kept for exact pooled ITL percentiles (8 bytes each); beyond it, a 1% sketch")
	fl.IntVar(&top, "top", 10, "slowest requests listed per metric")
	fl.BoolVarP(&quiet, "quiet", "q", false, "no progress lines on standard error")
	return cmd
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
	procs, err := collectorconfig.Load(cmd.Context(), path)
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

// parseSLO parses "NAME:ttft=500ms,tpot=15ms".
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
		d, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil {
			return sc, fmt.Errorf("%s: %w", k, err)
		}
		switch strings.TrimSpace(k) {
		case "ttft":
			sc.TTFT = &d
		case "tpot":
			sc.TPOT = &d
		case "itl":
			sc.ITL = &d
		case "e2e":
			sc.E2E = &d
		case "queue_time":
			sc.QueueTime = &d
		default:
			return sc, fmt.Errorf("unknown constraint %q: allowed are ttft, tpot, itl, e2e, queue_time", k)
		}
	}
	return sc, nil
}
