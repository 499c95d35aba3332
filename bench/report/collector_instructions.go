// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"cmp"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/llmslo/llmslo/bench/callgrind"
)

// gcField is the results field the "outside the GC" figures subtract: the
// own counts of the runtime's GC functions (callgrind.Category). Callgrind's
// inclusive counts do not serve here: it follows calls by the stack
// pointer, and a goroutine switch looks like a call, so the inclusive count
// of runtime.gcBgMarkWorker takes in whatever runs after the worker parks
// (network polls, HTTP reads).
const gcField = "gc"

// irRuns are the lines of results/collector_instructions.txt, by shape, arm
// and repetition, then by the spans the run was fed.
type irRuns map[string]map[string]map[int]map[int]map[string]float64

// commands are the command lines the runs were made with, in order.
var commands []string

func readIRRuns(path string) (irRuns, []string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	runs := irRuns{}
	var shapes []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 1 && fields[0] == "command" && !slices.Contains(commands, strings.Join(fields[1:], " ")) {
			commands = append(commands, strings.Join(fields[1:], " "))
		}
		if len(fields) == 0 || fields[0] != "callgrind" {
			continue
		}
		kv := map[string]string{}
		nums := map[string]float64{}
		for _, f := range fields[1:] {
			if k, v, ok := strings.Cut(f, "="); ok {
				kv[k] = v
				nums[k], _ = strconv.ParseFloat(v, 64)
			}
		}
		shape, arm := kv["shape"], kv["arm"]
		rep, spans := int(nums["rep"]), int(nums["spans"])
		if runs[shape] == nil {
			runs[shape] = map[string]map[int]map[int]map[string]float64{}
			shapes = append(shapes, shape)
		}
		if runs[shape][arm] == nil {
			runs[shape][arm] = map[int]map[int]map[string]float64{}
		}
		if runs[shape][arm][rep] == nil {
			runs[shape][arm][rep] = map[int]map[string]float64{}
		}
		recategorize(filepath.Join(filepath.Dir(path), "callgrind", fmt.Sprintf("%s.%s.%d.%d.callgrind", shape, arm, rep, spans)), nums)
		runs[shape][arm][rep][spans] = nums
	}
	return runs, shapes, sc.Err()
}

// recategorize files the run's own counts again from its kept profile, if
// there is one, so that the tables follow callgrind.Category as it is now.
func recategorize(profile string, nums map[string]float64) {
	p, err := callgrind.ReadFile(profile)
	if err != nil {
		return
	}
	cats := p.ByCategory()
	for _, c := range callgrind.Categories {
		nums[callgrind.Key(c)] = float64(cats[c])
	}
}

// perSpan is, per repetition in order, (v(2N) − v(N)) / N of what value
// reads from a run.
func (r irRuns) perSpan(shape, arm string, value func(map[string]float64) float64) []float64 {
	reps := r[shape][arm]
	var keys []int
	for k := range reps {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var out []float64
	for _, k := range keys {
		var ns []int
		for n := range reps[k] {
			ns = append(ns, n)
		}
		slices.Sort(ns)
		if len(ns) != 2 || ns[1] != 2*ns[0] {
			continue
		}
		out = append(out, (value(reps[k][ns[1]])-value(reps[k][ns[0]]))/float64(ns[0]))
	}
	return out
}

func total(m map[string]float64) float64     { return m["ir"] }
func outsideGC(m map[string]float64) float64 { return m["ir"] - m[gcField] }

// addedPerRep is the arm's per-span count minus its pass-through's, one
// repetition with the same one.
func (r irRuns) addedPerRep(shape, arm string, value func(map[string]float64) float64) []float64 {
	a, b := r.perSpan(shape, arm, value), r.perSpan(shape, baseOf[arm], value)
	var out []float64
	for i := range min(len(a), len(b)) {
		out = append(out, a[i]-b[i])
	}
	return out
}

// whole prints v rounded, without a minus sign on a rounded zero.
func whole(v float64) string {
	r := math.Round(v)
	if r == 0 {
		r = 0
	}
	return strconv.FormatFloat(r, 'f', 0, 64)
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// collectorInstructionsSection renders bench/collector_instructions.sh's
// counts: per arm what it adds per span over its own distribution's
// pass-through, with and without the GC; the pair against
// signal_to_metrics; the same by kind of span; and where the pair's added
// instructions go.
func collectorInstructionsSection(dir string) string {
	runs, shapes, err := readIRRuns(filepath.Join(dir, "collector_instructions.txt"))
	if err != nil || runs["mix"] == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString("## Instructions per span in the built collectors (callgrind)\n\n")
	b.WriteString("Each distribution under valgrind's callgrind (`make bench-instructions`, part of `make bench`: `GOMAXPROCS=1 GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off`, the builders' generated main linked with `-ldflags=-w` so functions keep their names, the GC as in production), fed exactly 2N and, in a fresh collector, exactly N spans of the load mix over OTLP/HTTP (100-span requests: 40 vLLM engine spans, 30 client spans of 20 chunk events, 30 semconv client spans; one request at a time) and exporting them over OTLP/HTTP, uncompressed, to a sink that discards them (so that each arm pays for encoding what it wrote on the spans, as a collector that forwards them does; `CALLGRIND_EXPORTER=debug` sends them to the debug exporter, which encodes nothing), the N run held as long as the 2N run so that start-up and timers cancel, each run's counts taken before shutdown (`callgrind_control -d`): per span = (Ir(2N) − Ir(N)) / N. At these N the GC's share of a run moves by thousands of instructions per span between repetitions (a cycle more or less); outside the GC the repetitions agree within a few percent. \"Added\" is an arm's count minus its own distribution's pass-through in the same repetition; \"outside the GC\" subtracts the own counts of the runtime's GC functions (marking, assists, sweeping, scavenging, write-barrier buffers, mark termination: `bench/callgrind`'s GC category), not the inclusive count of `runtime.gcBgMarkWorker`, which callgrind cannot give for Go: it follows calls by the stack pointer, so a goroutine switch looks like a call and the worker's inclusive count takes in what runs after it parks. ")
	fmt.Fprintf(&b, "%s\n\n", runsNote(runs))
	if len(commands) > 0 {
		fmt.Fprintf(&b, "Commands: `%s`.\n\n", strings.Join(commands, "`, then `"))
	}
	b.WriteString("| arm | Ir/span | added Ir/span: mean (per repetition) | outside the GC: mean (per repetition) |\n|---|---|---|---|\n")
	for _, arm := range armOrder {
		if runs["mix"][arm] == nil {
			continue
		}
		tot := runs.perSpan("mix", arm, total)
		if _, ok := baseOf[arm]; !ok {
			fmt.Fprintf(&b, "| %s | %.0f | — | — |\n", arm, mean(tot))
			continue
		}
		a, g := runs.addedPerRep("mix", arm, total), runs.addedPerRep("mix", arm, outsideGC)
		fmt.Fprintf(&b, "| %s | %.0f | **%.0f** (%s) | **%.0f** (%s) |\n", arm, mean(tot), mean(a), joined(a, "%.0f"), mean(g), joined(g, "%.0f"))
	}
	b.WriteString("\n")
	b.WriteString(pairRatios(runs, shapes))
	b.WriteString(categoryTable(runs))
	b.WriteString(topFunctions(dir, runs))
	return b.String()
}

// runsNote says N and the repetitions the table is from.
func runsNote(runs irRuns) string {
	n, reps := runs.size("mix")
	return fmt.Sprintf("N = %d, %d repetitions, the arms' order rotated each repetition.", n, reps)
}

// size is N and the number of repetitions of the pair's runs on a shape.
func (r irRuns) size(shape string) (n, reps int) {
	for _, sizes := range r[shape]["with_llmslo"] {
		for s := range sizes {
			if n == 0 || s < n {
				n = s
			}
		}
	}
	return n, len(r[shape]["with_llmslo"])
}

// pairRatios is the pair's added count over signal_to_metrics's, on the mix
// and on each kind of span alone.
func pairRatios(runs irRuns, shapes []string) string {
	var b strings.Builder
	b.WriteString("The pair's added instructions over `signal_to_metrics`'s (means of the repetitions; the ratio of each repetition beside):\n\n")
	b.WriteString("| spans (N, repetitions) | pair adds | signal_to_metrics adds | ratio (per repetition) | pair outside the GC | signal_to_metrics outside the GC | ratio outside the GC (per repetition) |\n|---|---|---|---|---|---|---|\n")
	for _, shape := range shapes {
		if runs[shape]["with_llmslo"] == nil || runs[shape]["peer_signal_to_metrics"] == nil {
			continue
		}
		n, reps := runs.size(shape)
		row := []string{fmt.Sprintf("%s (%d, %d)", shape, n, reps)}
		for _, value := range []func(map[string]float64) float64{total, outsideGC} {
			p, s := runs.addedPerRep(shape, "with_llmslo", value), runs.addedPerRep(shape, "peer_signal_to_metrics", value)
			var ratios []float64
			for i := range min(len(p), len(s)) {
				ratios = append(ratios, p[i]/s[i])
			}
			row = append(row, fmt.Sprintf("%.0f", mean(p)), fmt.Sprintf("%.0f", mean(s)), fmt.Sprintf("**%.2f** (%s)", mean(p)/mean(s), joined(ratios, "%.2f")))
		}
		fmt.Fprintf(&b, "| %s |\n", strings.Join(row, " | "))
	}
	b.WriteString("\n")
	return b.String()
}

// categoryTable files the added instructions of the pair and of
// signal_to_metrics on the mix by callgrind.Category of the function that
// executed them (own counts).
func categoryTable(runs irRuns) string {
	var b strings.Builder
	b.WriteString("Where the added instructions go on the mix, by the function that executes them (own counts; \"protobuf encoding\" is the exporters' and the telemetry's sizing and marshalling; \"other\" includes the runtime's helpers such as memmove, map access and locks, wherever they are called from):\n\n")
	b.WriteString("| category | pair | signal_to_metrics | span_metrics |\n|---|---|---|---|\n")
	arms := []string{"with_llmslo", "peer_signal_to_metrics", "peer_span_metrics"}
	sums := make([]float64, len(arms))
	for _, c := range callgrind.Categories {
		row := []string{c}
		for i, arm := range arms {
			v := mean(runs.addedPerRep("mix", arm, func(m map[string]float64) float64 { return m[callgrind.Key(c)] }))
			sums[i] += v
			row = append(row, whole(v))
		}
		fmt.Fprintf(&b, "| %s |\n", strings.Join(row, " | "))
	}
	fmt.Fprintf(&b, "| total | %.0f | %.0f | %.0f |\n\n", sums[0], sums[1], sums[2])
	return b.String()
}

// pairDelta is, per function, the own count and the calls the pair adds
// per span in one repetition: (with(2N) − with(N) − without(2N) +
// without(N)) / N, read from the kept profiles.
func pairDelta(dir string, rep int, ns []int) (map[string][2]float64, error) {
	d := map[string][2]float64{}
	for sign, arm := range map[float64]string{1: "with_llmslo", -1: "without_llmslo"} {
		for i, n := range ns {
			p, err := callgrind.ReadFile(filepath.Join(dir, "callgrind", fmt.Sprintf("mix.%s.%d.%d.callgrind", arm, rep, n)))
			if err != nil {
				return nil, err
			}
			w := sign / float64(ns[0])
			if i == 0 {
				w = -w
			}
			for f, v := range p.Self {
				c := d[f]
				c[0] += w * float64(v)
				d[f] = c
			}
			for e, v := range p.Count {
				c := d[e.Callee]
				c[1] += w * float64(v)
				d[e.Callee] = c
			}
		}
	}
	return d, nil
}

// topFunctions lists the functions the pair adds the most instructions
// in, per span on the mix, from the profiles kept in results/callgrind.
func topFunctions(dir string, runs irRuns) string {
	type fnCost struct {
		name        string
		self, calls float64
		reps        int
	}
	costs := map[string]*fnCost{}
	for rep, sizes := range runs["mix"]["with_llmslo"] {
		var ns []int
		for n := range sizes {
			ns = append(ns, n)
		}
		slices.Sort(ns)
		if len(ns) != 2 {
			continue
		}
		d, err := pairDelta(dir, rep, ns)
		if err != nil {
			return ""
		}
		for f, c := range d {
			if costs[f] == nil {
				costs[f] = &fnCost{name: f}
			}
			costs[f].self += c[0]
			costs[f].calls += c[1]
			costs[f].reps++
		}
	}
	var list []*fnCost
	for _, c := range costs {
		c.self /= float64(c.reps)
		c.calls /= float64(c.reps)
		list = append(list, c)
	}
	slices.SortFunc(list, func(a, b *fnCost) int { return cmp.Compare(b.self, a.self) })
	var b strings.Builder
	b.WriteString("The functions the pair adds the most own instructions in, per span of the mix (means of the repetitions), with the calls into each it adds per span:\n\n| function | category | added Ir/span | added calls/span |\n|---|---|---|---|\n")
	for _, c := range list[:min(len(list), 25)] {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", c.name, callgrind.Category(c.name), whole(c.self), strconv.FormatFloat(math.Round(c.calls*10)/10+0, 'f', 1, 64))
	}
	b.WriteString("\n")
	return b.String()
}
