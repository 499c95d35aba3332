// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

// Command llmloadgen sends realistic LLM request spans to a collector over
// OTLP/gRPC with the OpenTelemetry Go SDK, as instrumented servers and
// clients do, and records the ground truth of every request.
//
//	llmloadgen -endpoint 127.0.0.1:4317 -rate 20 -duration 30s -truth truth.jsonl -summary
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

	"github.com/llmslo/llmslo/internal/loadgen"
)

// incidentCfg is the -incident-* flags, when -incident-model is set.
var incidentCfg *loadgen.Incident

func main() {
	flag.CommandLine.Usage = func() { usage(flag.CommandLine) }
	endpoint := flag.String("endpoint", "127.0.0.1:4317", "collector OTLP/gRPC endpoint")
	rate := flag.Float64("rate", 20, "requests per second (Poisson arrivals)")
	ramp := flag.String("ramp", "", `FROM:TO: the rate rises (or falls) linearly from FROM to TO requests per second over -duration, replacing -rate (e.g. 5:60)`)
	replicas := flag.Int("replicas", 1, "engines per model, taking its requests in turn (service.instance.id <model>-<n> on their engine spans)")
	duration := flag.Duration("duration", 30*time.Second, "how long requests keep arriving")
	seed := flag.Uint64("seed", 1, "random seed")
	models := flag.String("models", "llama-3.1-8b-instruct=3,llama-3.1-70b-instruct=1,qwen2.5-1.5b-instruct=2", "model profiles with weights")
	shapes := flag.String("shapes", "vllm=1,chunks=1,semconv=1", "producer shapes with weights: vllm, chunks, semconv, trtllm, joined")
	fast := flag.Bool("fast", false, "emit -count requests at once with synthetic past timestamps")
	count := flag.Int("count", 10000, "requests in -fast mode")
	modelAttr := flag.Bool("vllm-model-attr", true, "write gen_ai.response.model on vLLM spans (V0 style; V1 writes none)")
	truthFile := flag.String("truth", "", "write the ground truth of every span here (JSON lines)")
	summary := flag.Bool("summary", false, "print the ground truth per model and layer at the end")
	sloTTFT := flag.Duration("slo-ttft", 500*time.Millisecond, "SLO bound on TTFT for the summary's goodput (0: none)")
	sloTPOT := flag.Duration("slo-tpot", 15*time.Millisecond, "SLO bound on TPOT (0: none)")
	sloE2E := flag.Duration("slo-e2e", 2*time.Second, "SLO bound on E2E (0: none)")
	var incident loadgen.IncidentFlags
	incident.Register(flag.CommandLine)
	flag.Parse()
	var err error
	if incidentCfg, err = incident.Incident(flag.CommandLine); err != nil {
		fmt.Fprintln(os.Stderr, "llmloadgen:", err)
		os.Exit(2)
	}

	load := loadgen.Config{Rate: *rate, Duration: *duration, Replicas: *replicas}
	if *ramp != "" {
		if load.Ramp, err = loadgen.ParseRamp(*ramp); err != nil {
			fmt.Fprintln(os.Stderr, "llmloadgen: -ramp:", err)
			os.Exit(2)
		}
	}
	if err := run(*endpoint, load, *seed, *models, *shapes, *fast, *count, *modelAttr, *truthFile, *summary,
		loadgen.SLO{TTFT: *sloTTFT, TPOT: *sloTPOT, E2E: *sloE2E}); err != nil {
		fmt.Fprintln(os.Stderr, "llmloadgen:", err)
		os.Exit(1)
	}
}

// run sends the load: load's Rate, Duration, Ramp and Replicas, the rest
// from the other flags.
func run(endpoint string, load loadgen.Config, seed uint64, models, shapes string, fast bool, count int,
	modelAttr bool, truthFile string, summary bool, slo loadgen.SLO) error {
	rate, duration := load.Rate, load.Duration
	if rate <= 0 {
		return fmt.Errorf("-rate must be positive")
	}
	if load.Replicas < 1 {
		return fmt.Errorf("-replicas must be at least 1")
	}
	mw, err := loadgen.ParseWeights(models)
	if err != nil {
		return fmt.Errorf("-models: %w", err)
	}
	sw, err := loadgen.ParseWeights(shapes)
	if err != nil {
		return fmt.Errorf("-shapes: %w", err)
	}
	cfg := loadgen.Config{Endpoint: endpoint, Rate: rate, Duration: duration, Seed: seed, Models: mw,
		Shapes: map[loadgen.Shape]float64{}, Fast: fast, Count: count, ModelAttr: modelAttr, Incident: incidentCfg,
		Ramp: load.Ramp, Replicas: load.Replicas}
	for s, w := range sw {
		cfg.Shapes[loadgen.Shape(s)] = w
	}
	if truthFile != "" {
		f, err := os.Create(truthFile)
		if err != nil {
			return err
		}
		defer f.Close()
		cfg.Truth = f
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	truths, err := loadgen.Run(ctx, cfg)
	if err != nil {
		return err
	}
	elapsed := time.Since(start)
	if fast {
		elapsed = duration
	}
	fmt.Printf("llmloadgen: sent %d requests to %s in %s\n", len(truths), endpoint, time.Since(start).Round(time.Millisecond))
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
