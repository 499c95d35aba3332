// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

// Command llmloadgen sends realistic LLM request spans to a collector over
// OTLP/gRPC with the OpenTelemetry Go SDK, as instrumented servers and
// clients do, and records the ground truth of every request. With -listen
// it is the second half of `make run`: it prints, every few seconds, what
// the collector's llm_slo connector reports beside that ground truth.
//
//	llmloadgen -endpoint 127.0.0.1:4317 -rate 20 -duration 30s -truth truth.jsonl -summary
//	llmloadgen -endpoint 127.0.0.1:4317 -listen 127.0.0.1:4319
//	llmloadgen -ramp 5:60 -replicas 2 -duration 60s -truth truth.jsonl
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/llmslo/llmslo/tools/internal/loadgen"
	"github.com/llmslo/llmslo/tools/internal/termtext"
)

// flags are the command's flags, parsed.
type flags struct {
	endpoint, models, shapes, truthFile string
	ramp                                string
	replicas                            int
	rate                                float64
	duration                            time.Duration
	seed                                uint64
	fast, modelAttr, summary            bool
	count                               int
	slo                                 loadgen.SLO
	incident                            loadgen.IncidentFlags
	live                                liveOptions
}

func (f *flags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.endpoint, "endpoint", "127.0.0.1:4317", "collector OTLP/gRPC endpoint")
	fs.Float64Var(&f.rate, "rate", 20, "requests per second (Poisson arrivals)")
	fs.StringVar(&f.ramp, "ramp", "", `FROM:TO: the rate rises (or falls) linearly from FROM to TO requests per second over -duration, replacing -rate (e.g. 5:60)`)
	fs.IntVar(&f.replicas, "replicas", 1, "engines per model, taking its requests in turn (service.instance.id <model>-<n> on their engine spans)")
	fs.DurationVar(&f.duration, "duration", 30*time.Second, "how long requests keep arriving")
	fs.Uint64Var(&f.seed, "seed", 1, "random seed")
	fs.StringVar(&f.models, "models", "llama-3.1-8b-instruct=3,llama-3.1-70b-instruct=1,qwen2.5-1.5b-instruct=2", "model profiles with weights")
	fs.StringVar(&f.shapes, "shapes", "vllm=1,chunks=1,semconv=1", "producer shapes with weights: vllm, chunks, semconv, trtllm, joined")
	fs.BoolVar(&f.fast, "fast", false, "emit -count requests at once with synthetic past timestamps")
	fs.IntVar(&f.count, "count", 10000, "requests in -fast mode")
	fs.BoolVar(&f.modelAttr, "vllm-model-attr", true, "write gen_ai.response.model on vLLM spans (V0 style; V1 writes none)")
	fs.StringVar(&f.truthFile, "truth", "", "write the ground truth of every span here (JSON lines)")
	fs.BoolVar(&f.summary, "summary", false, "print the ground truth per model and layer at the end")
	fs.DurationVar(&f.slo.TTFT, "slo-ttft", 500*time.Millisecond, "SLO bound on TTFT for the summary's goodput (0: none)")
	fs.DurationVar(&f.slo.TPOT, "slo-tpot", 15*time.Millisecond, "SLO bound on TPOT (0: none)")
	fs.DurationVar(&f.slo.E2E, "slo-e2e", 2*time.Second, "SLO bound on E2E (0: none)")
	fs.StringVar(&f.live.listen, "listen", "", "compare live: receive the llm_slo connector's metrics over OTLP/HTTP here and print them beside the ground truth")
	fs.DurationVar(&f.live.refresh, "refresh", 5*time.Second, "-listen: table refresh interval")
	fs.DurationVar(&f.live.flush, "flush", 2*time.Second, "-listen: the connector's metrics_flush_interval (to wait for its last flush)")
	fs.IntVar(&f.live.width, "width", termtext.Auto, "-listen: fit the tables to this many columns (0: unlimited; default: the terminal's width, "+
		"else $COLUMNS, else 120)")
	f.incident.Register(fs)
}

func main() {
	flag.CommandLine.Usage = func() { usage(flag.CommandLine) }
	var f flags
	f.register(flag.CommandLine)
	flag.Parse()
	cfg, err := f.config(flag.CommandLine)
	if err != nil {
		fmt.Fprintln(os.Stderr, "llmloadgen:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if f.live.listen != "" {
		f.live.width = termtext.Detect(f.live.width, os.Stdout, os.Getenv)
		err = live(ctx, cfg, f.live, os.Stdout)
	} else {
		err = run(ctx, cfg, f.truthFile, f.summary, f.slo)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "llmloadgen:", err)
		os.Exit(1)
	}
}

// config is the generator's configuration the flags describe.
func (f *flags) config(fs *flag.FlagSet) (loadgen.Config, error) {
	if f.rate <= 0 {
		return loadgen.Config{}, fmt.Errorf("-rate must be positive")
	}
	if f.replicas < 1 {
		return loadgen.Config{}, fmt.Errorf("-replicas must be at least 1")
	}
	var ramp *loadgen.Ramp
	if f.ramp != "" {
		var err error
		if ramp, err = loadgen.ParseRamp(f.ramp); err != nil {
			return loadgen.Config{}, fmt.Errorf("-ramp: %w", err)
		}
	}
	mw, err := loadgen.ParseWeights(f.models)
	if err != nil {
		return loadgen.Config{}, fmt.Errorf("-models: %w", err)
	}
	sw, err := loadgen.ParseWeights(f.shapes)
	if err != nil {
		return loadgen.Config{}, fmt.Errorf("-shapes: %w", err)
	}
	incident, err := f.incident.Incident(fs)
	if err != nil {
		return loadgen.Config{}, err
	}
	cfg := loadgen.Config{Endpoint: f.endpoint, Rate: f.rate, Duration: f.duration, Seed: f.seed, Models: mw,
		Shapes: map[loadgen.Shape]float64{}, Fast: f.fast, Count: f.count, ModelAttr: f.modelAttr, Incident: incident,
		Ramp: ramp, Replicas: f.replicas}
	for s, w := range sw {
		cfg.Shapes[loadgen.Shape(s)] = w
	}
	return cfg, nil
}

func run(ctx context.Context, cfg loadgen.Config, truthFile string, summary bool, slo loadgen.SLO) error {
	if truthFile != "" {
		f, err := os.Create(truthFile)
		if err != nil {
			return err
		}
		defer f.Close()
		cfg.Truth = f
	}
	start := time.Now()
	truths, err := loadgen.Run(ctx, cfg)
	if err != nil {
		return err
	}
	elapsed := time.Since(start)
	if cfg.Fast {
		elapsed = cfg.Duration
	}
	fmt.Printf("llmloadgen: sent %d requests to %s in %s\n", len(truths), cfg.Endpoint, time.Since(start).Round(time.Millisecond))
	if summary {
		loadgen.PrintSummary(os.Stdout, loadgen.Summarize(truths, slo), elapsed)
	}
	return nil
}

func usage(fs *flag.FlagSet) {
	w := fs.Output()
	fmt.Fprint(w, `Usage: llmloadgen [flags]

Sends LLM request spans to a collector over OTLP/gRPC, as instrumented
servers and clients do, and records the ground truth of every span
(-truth): TTFT, TPOT, ITL, E2E, and the parts of the latency (queue,
prefill, KV transfer, network, decode); for an engine span, its replica
and that replica's engine spans in flight when it started (in_flight).

Each model is served by -replicas engines that queue requests beyond
their slots, so -ramp past what they hold shows where goodput drops
(llmslo report's Capacity section reads it back from the spans).

Shapes (-shapes):
  vllm     vLLM's llm_request span (queue, prefill, decode times)
  chunks   a client span with one event per streamed chunk
  semconv  a GenAI semantic-conventions client span
  trtllm   TensorRT-LLM's span in disaggregated serving (queue, KV transfer)
  joined   a chunks client span with a vllm span as its child, in one
           trace (two truths)

Live comparison (-listen ADDR): receive the metrics of the collector's
llm_slo connector over OTLP/HTTP on ADDR and print them every -refresh
beside the ground truth, for the SLOs of config/demo.yaml (interactive:
TTFT<=500ms, TPOT<=15ms, E2E<=2s; batch: E2E<=30s), then how closely they
agree once the connector has flushed the last requests (make run).

Incidents (-incident-model M): from -incident-at on, M's requests change
by -incident-kind:
  ttft         TTFT x -incident-ttft-factor; the added time is prefill
  queue        queue time + -incident-queue-delay
  long_prompt  input tokens x -incident-prompt-factor; prefill grows with them
  network      client spans' TTFT and E2E + -incident-network-delay;
               engine spans unchanged

Flags:
`)
	fs.PrintDefaults()
}
