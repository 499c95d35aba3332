// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"
)

// Config drives a run.
type Config struct {
	Endpoint string        // OTLP/gRPC endpoint of the collector
	Rate     float64       // requests per second (Poisson arrivals)
	Duration time.Duration // how long arrivals go on
	Seed     uint64
	Models   map[string]float64 // profile name -> weight
	Shapes   map[Shape]float64  // shape -> weight
	// Fast emits Count requests at once with synthetic timestamps ending
	// now, instead of in real time.
	Fast  bool
	Count int
	// ModelAttr writes gen_ai.response.model on vLLM spans (V0 style); V1
	// spans carry none.
	ModelAttr bool
	// Truth, if set, receives one JSON object per span (per request, but
	// two for a joined trace: its engine's and its client's).
	Truth io.Writer
	// OnTruth, if set, is called with each request's truth as its span is
	// emitted (from several goroutines; it must be safe for that).
	OnTruth func(Truth)
	// Exporter, if set, replaces the OTLP exporter (tests).
	Exporter sdktrace.SpanExporter
	// Incident, if set, changes one model's requests from a point on.
	Incident *Incident
	// Ramp, if set, replaces Rate: the rate changes linearly over
	// Duration (in Fast mode too, where Count still bounds the requests).
	Ramp *Ramp
	// Replicas serve each model (0: one), taking its requests in turn;
	// each is an engine of its own, named by ReplicaName on its engine
	// spans' resource (service.instance.id).
	Replicas int
}

// ParseWeights parses "a=2,b=1,c" (weight 1 when omitted).
func ParseWeights(s string) (map[string]float64, error) {
	out := map[string]float64{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, w, found := strings.Cut(part, "=")
		weight := 1.0
		if found {
			var err error
			if weight, err = strconv.ParseFloat(w, 64); err != nil || weight < 0 {
				return nil, fmt.Errorf("weight of %q: %q is not a non-negative number", name, w)
			}
		}
		out[name] = weight
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("empty list")
	}
	return out, nil
}

type picker struct {
	names []string
	cum   []float64
}

func newPicker(weights map[string]float64) picker {
	var p picker
	for name := range weights {
		p.names = append(p.names, name)
	}
	sort.Strings(p.names)
	total := 0.0
	for _, n := range p.names {
		total += weights[n]
		p.cum = append(p.cum, total)
	}
	for i := range p.cum {
		p.cum[i] /= total
	}
	return p
}

func (p picker) pick(rng *rand.Rand) string {
	x := rng.Float64()
	for i, c := range p.cum {
		if x < c {
			return p.names[i]
		}
	}
	return p.names[len(p.names)-1]
}

// joinLag is how long after its engine span a joined trace's client span
// is ended in real time: past the engine's batch timeout, so that the
// engine's view reaches the collector first.
const joinLag = time.Second

// Run generates the traffic, sends it, and returns the ground truth of
// every span. It stops when the duration is over (or ctx is done),
// after every started request's spans have been exported.
func Run(ctx context.Context, cfg Config) ([]Truth, error) {
	shapeWeights, err := cfg.check()
	if err != nil {
		return nil, err
	}
	providers, err := newProviders(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer shutdown(providers)

	rng := rand.New(rand.NewPCG(cfg.Seed, 0x5eed))
	engines := newEngines(cfg.replicas(), cfg.Seed)
	models, shapes := newPicker(cfg.Models), newPicker(shapeWeights)
	s := &sender{providers: providers, rec: newRecorder(cfg), fast: cfg.Fast, modelAttr: cfg.ModelAttr}
	turn, flights := map[string]int{}, inFlight{}

	begin := cfg.begin()
	arrive := arrivals{cfg: &cfg, rng: rng}
	for n := 0; ; n++ {
		at := arrive.next()
		if cfg.Fast && n >= cfg.Count || (!cfg.Fast || cfg.Ramp != nil) && at > cfg.Duration.Seconds() {
			break
		}
		model, shape := models.pick(rng), Shape(shapes.pick(rng))
		eng := engines[model][turn[model]]
		turn[model] = (turn[model] + 1) % len(engines[model])
		req := eng.Next(at)
		cfg.Incident.apply(&req, at)
		arrival := begin.Add(Durations(at))
		chunkRng := rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64()))
		if shape == ShapeTRTLLM {
			req.disaggregate(Profiles[model], chunkRng)
		}
		if shape.serves() {
			req.InFlight = flights.arrive(req.Replica, arrival.UnixNano(), serverEnd(&req, arrival).UnixNano())
		}
		emit := func() { s.emit(shape, &req, arrival, chunkRng) }
		if cfg.Fast {
			emit()
			continue
		}
		// In real time: wait for the arrival, then emit the span when the
		// request ends, as an instrumented server does.
		if !sleepUntil(ctx, arrival) {
			break
		}
		s.wg.Add(1)
		time.AfterFunc(Durations(req.E2E()+0.005), func() { defer s.wg.Done(); emit() })
	}
	s.wg.Wait()
	s.endJoined(ctx)
	for _, tp := range providers {
		_ = tp.ForceFlush(ctx)
	}
	return s.rec.all(), nil
}

// begin is the clock time of the run's time 0: now, or in Fast mode far
// enough in the past that every request has ended.
func (cfg *Config) begin() time.Time {
	if !cfg.Fast {
		return time.Now()
	}
	span := time.Duration(float64(cfg.Count) / max(cfg.Rate, 1) * float64(time.Second))
	if cfg.Ramp != nil {
		span = cfg.Duration
	}
	return time.Now().Add(-span - 2*time.Minute)
}

// arrivals draws the run's arrival times, one exponential draw each: at
// the Rate, or along the Ramp.
type arrivals struct {
	cfg *Config
	rng *rand.Rand
	// at is the last arrival (seconds since begin), work the arrivals
	// expected by then on the ramp.
	at, work float64
}

func (a *arrivals) next() float64 {
	if a.cfg.Ramp != nil {
		a.work += a.rng.ExpFloat64()
		a.at = a.cfg.Ramp.at(a.work, a.cfg.Duration)
	} else {
		a.at += a.rng.ExpFloat64() / a.cfg.Rate
	}
	return a.at
}

// sender writes the requests' spans and records their truths.
type sender struct {
	providers map[string]*sdktrace.TracerProvider // by service.name
	rec       *recorder
	fast      bool
	modelAttr bool
	wg        sync.WaitGroup
	mu        sync.Mutex
	ends      []func() // fast mode: the joined client spans to end
}

// tracer is the tracer of service, on replica for an engine's service.
func (s *sender) tracer(service, replica string) trace.Tracer {
	return s.providers[providerKey(service, replica)].Tracer("github.com/llmslo/llmslo/tools/cmd/llmloadgen")
}

// providerKey names the provider of service on replica ("" for a client).
func providerKey(service, replica string) string { return service + "\x00" + replica }

func (s *sender) emit(shape Shape, req *Request, arrival time.Time, rng *rand.Rand) {
	if shape != ShapeJoined {
		replica := ""
		if shape.serves() {
			replica = req.Replica
		}
		s.rec.record(Emit(s.tracer(shape.Service(), replica), shape, req, arrival, rng, s.modelAttr))
		return
	}
	svc := shape.Services()
	engine, client, end := EmitJoined(s.tracer(svc[0], ""), s.tracer(svc[1], req.Replica), req, arrival, rng, s.modelAttr)
	s.rec.record(engine)
	s.rec.record(client)
	if s.fast {
		s.mu.Lock()
		s.ends = append(s.ends, end)
		s.mu.Unlock()
		return
	}
	s.wg.Add(1)
	time.AfterFunc(joinLag, func() { defer s.wg.Done(); end() })
}

// endJoined ends, in fast mode, the joined client spans once the engine
// spans have been exported.
func (s *sender) endJoined(ctx context.Context) {
	if len(s.ends) == 0 {
		return
	}
	prefix := providerKey(ShapeJoined.Services()[1], "")
	for key, tp := range s.providers {
		if strings.HasPrefix(key, prefix) { // the engine's, on every replica
			_ = tp.ForceFlush(ctx)
		}
	}
	for _, end := range s.ends {
		end()
	}
}

// check validates the configuration's names and returns the shape weights.
func (cfg *Config) check() (map[string]float64, error) {
	for name := range cfg.Models {
		if _, ok := Profiles[name]; !ok {
			return nil, fmt.Errorf("unknown model profile %q: known are %s", name, strings.Join(ProfileNames(), ", "))
		}
	}
	shapeWeights := map[string]float64{}
	for s, w := range cfg.Shapes {
		if !slices.Contains(AllShapes, s) {
			return nil, fmt.Errorf("unknown shape %q: known are %s", s, shapeNames())
		}
		shapeWeights[string(s)] = w
	}
	if cfg.Incident != nil {
		if err := cfg.Incident.Check(cfg.Models); err != nil {
			return nil, err
		}
	}
	if cfg.Ramp != nil && cfg.Duration <= 0 {
		return nil, fmt.Errorf("a ramp needs a positive duration to rise over")
	}
	if cfg.Replicas < 0 || cfg.Replicas > maxReplicas {
		return nil, fmt.Errorf("replicas: %d, want 1 to %d", cfg.Replicas, maxReplicas)
	}
	return shapeWeights, nil
}

// maxReplicas bounds Config.Replicas: each is an OTLP exporter per engine
// service.
const maxReplicas = 64

// replicas is Config.Replicas, at least one.
func (cfg *Config) replicas() int { return max(1, cfg.Replicas) }

// newEngines returns n engines per built-in model, each with its own
// random stream (replica 0's is the one a single engine has always had).
func newEngines(n int, seed uint64) map[string][]*Engine {
	engines := map[string][]*Engine{}
	for i, name := range ProfileNames() {
		for r := range n {
			e := NewEngine(Profiles[name], uint64(i)*7919+uint64(r)*104729+seed)
			e.Replica = ReplicaName(name, r)
			engines[name] = append(engines[name], e)
		}
	}
	return engines
}

func shapeNames() string {
	names := make([]string, len(AllShapes))
	for i, s := range AllShapes {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}

// newProviders returns one tracer provider per service of the run's
// shapes, each with the service name of the producer it imitates; an
// engine's service has one per replica of every model, its
// service.instance.id the replica's name.
func newProviders(ctx context.Context, cfg Config) (map[string]*sdktrace.TracerProvider, error) {
	providers := map[string]*sdktrace.TracerProvider{}
	for _, sh := range AllShapes {
		if _, ok := cfg.Shapes[sh]; !ok {
			continue
		}
		for i, svc := range sh.Services() {
			instances := []string{""}
			if sh.serves() && i == len(sh.Services())-1 {
				instances = nil
				for _, m := range ProfileNames() {
					for r := range cfg.replicas() {
						instances = append(instances, ReplicaName(m, r))
					}
				}
			}
			if err := addProviders(ctx, cfg, providers, svc, instances); err != nil {
				shutdown(providers)
				return nil, err
			}
		}
	}
	return providers, nil
}

// addProviders adds service's provider on each instance ("" for none).
func addProviders(ctx context.Context, cfg Config, providers map[string]*sdktrace.TracerProvider, svc string, instances []string) error {
	for _, inst := range instances {
		if _, ok := providers[providerKey(svc, inst)]; ok {
			continue
		}
		exp := cfg.Exporter
		if exp == nil {
			var err error
			if exp, err = otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(cfg.Endpoint), otlptracegrpc.WithInsecure()); err != nil {
				return err
			}
		}
		attrs := []attribute.KeyValue{semconv.ServiceName(svc)}
		if inst != "" {
			attrs = append(attrs, semconv.ServiceInstanceID(inst))
		}
		res := resource.NewWithAttributes(semconv.SchemaURL, attrs...)
		// A long stream has more chunk events than the SDK's default limit
		// of 128, beyond which it drops the oldest (the first tokens).
		limits := sdktrace.NewSpanLimits()
		limits.EventCountLimit = 1 << 14
		providers[providerKey(svc, inst)] = sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithRawSpanLimits(limits),
			sdktrace.WithBatcher(exp, sdktrace.WithBatchTimeout(500*time.Millisecond), sdktrace.WithMaxQueueSize(65536)))
	}
	return nil
}

func shutdown(providers map[string]*sdktrace.TracerProvider) {
	for _, tp := range providers {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_ = tp.Shutdown(sctx)
		cancel()
	}
}

// sleepUntil waits for t; it returns false when ctx ends first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return true
	}
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// recorder keeps the ground truth of every request emitted, writes it as
// JSON lines when configured, and calls the configured callback.
type recorder struct {
	mu     sync.Mutex
	truths []Truth
	enc    *json.Encoder
	on     func(Truth)
}

func newRecorder(cfg Config) *recorder {
	r := &recorder{on: cfg.OnTruth}
	if cfg.Truth != nil {
		r.enc = json.NewEncoder(cfg.Truth)
	}
	return r
}

func (r *recorder) record(t Truth) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.truths = append(r.truths, t)
	if r.enc != nil {
		_ = r.enc.Encode(t)
	}
	if r.on != nil {
		r.on(t)
	}
}

func (r *recorder) all() []Truth {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.truths
}

// ProfileNames lists the built-in profiles, sorted.
func ProfileNames() []string {
	var names []string
	for n := range Profiles {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// ReadTruth reads a truth file written by Run.
func ReadTruth(r io.Reader) ([]Truth, error) {
	var out []Truth
	dec := json.NewDecoder(r)
	for dec.More() {
		var t Truth
		if err := dec.Decode(&t); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}
