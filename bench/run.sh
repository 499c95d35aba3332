#!/usr/bin/env bash
# make bench: every benchmark, side by side, then BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")"
export PATH="$(go env GOPATH)/bin:$PATH"
COUNT=${COUNT:-6}
mkdir -p results
rm -f results/*.txt

command -v benchstat >/dev/null 2>&1 || go install golang.org/x/perf/cmd/benchstat@latest
{
  echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
  echo "cores: $(nproc)"
  echo "$(go version)"
  echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
} > results/machine.txt
go test -c -o bench.test ./
# What the machine charges for the first touch of a page, on one thread and
# on two at once: the Go heap pays it whenever it grows.
./bench.test -test.run XXX -test.bench FreshPages -test.benchtime 20x -test.cpu 1,2 \
  | awk '/^BenchmarkFreshPages/ { for (i = 1; i < NF; i++) if ($(i+1) == "ns/page") v[++n] = $i }
      END { printf "first touch of a 4 KiB page (BenchmarkFreshPages): %.0f ns on one thread; %.0f ns of wall time per page on two at once\n", v[1], v[2] }' \
  >> results/machine.txt
# COUNT rounds of every benchmark once, not every benchmark COUNT times in a
# row: the machine's speed drifts over minutes, and interleaving puts the
# drift on every arm alike, so the ratios between arms hold.
cmd="go test -run XXX -bench . -benchmem -count 1 -timeout 60m ./"
echo "(cd bench && for i in \$(seq $COUNT); do $cmd; done)" > results/command.txt
: > results/bench.txt
for i in $(seq "$COUNT"); do
  echo ">> round $i of $COUNT: $cmd"
  ./bench.test -test.run XXX -test.bench . -test.benchmem -test.count 1 -test.timeout 60m | tee -a results/bench.txt
done
benchstat results/bench.txt > results/benchstat.txt

echo ">> instructions per span (callgrind; installs valgrind if missing; about 2 minutes)"
./instructions.sh

echo ">> CPU profiles of the 16-event shape"
go test -run XXX -bench 'Processor/chunks_16/processor' -benchtime 2000x -cpuprofile results/processor.prof ./ > /dev/null
go tool pprof -top -nodecount=12 results/processor.prof 2>/dev/null | tail -13 > results/processor.top.txt
go test -run XXX -bench 'Connector/chunks_16/llmslo' -benchtime 2000x -cpuprofile results/connector.prof ./ > /dev/null
go tool pprof -top -nodecount=12 results/connector.prof 2>/dev/null | tail -13 > results/connector.top.txt
rm -f bench.test

echo ">> end to end: the built distributions under load (about 25 minutes)"
(cd .. && make dist >/dev/null)
./peer/build.sh
# The peer's signal_to_metrics configuration computes what the pair does on
# engine spans, or the comparison below would not be like for like.
go test -count=1 -run 'TestPeerAgrees|TestArmConfigs' -v ./ | grep -E '^(---|ok|FAIL)|both find'
rm -f results/load.txt results/*.prof
# Five rounds: at a fixed rate one run moves an arm by as much as it adds,
# and the median of five is steadier than that of three.
LOAD_ROUNDS=${LOAD_ROUNDS:-5} LLMSLO_BENCH_LOAD="$PWD/results/load.txt" LLMSLO_BENCH_PROFILE="$PWD/results" \
  go test -count=1 -run TestCollectorLoad -timeout 60m -v ./
for arm in without_llmslo with_llmslo peer_signal_to_metrics; do
  go tool pprof -top -nodecount=12 "results/$arm.prof" 2>/dev/null | tail -13 > "results/collector_$arm.top.txt"
done
# sed, not head: head would close the pipe early and fail the script under pipefail.
go tool pprof -top -cum -focus llmslo -nodecount=300 results/with_llmslo.prof 2>/dev/null \
  | grep -E 'flat%|github.com/llmslo' | sed -n 1,16p > results/collector_llmslo.top.txt

echo ">> the built collectors' instructions per span under callgrind (CALLGRIND_N, CALLGRIND_REPS; see collector_instructions.sh)"
./collector_instructions.sh

echo ">> llmslo report: throughput on one and two cores, its ceiling, memory per request (about 8 minutes)"
# Rounds of one core, two, and the ceiling (one independent one-core report
# per core, at once), not every run on one core first: the machine's speed
# drifts, and the ratios are between runs next to each other.
(cd ../tools && go test -c -o ../bench/report.test ./internal/report)
: > results/report.txt
for i in 1 2 3; do
  (cd ../tools/internal/report && ../../../bench/report.test -test.run XXX -test.bench 'BenchmarkReport$' -test.benchtime 5x \
    -test.cpu 1,2 -test.timeout 30m) | grep '^Benchmark' | tee -a results/report.txt
  (cd ../tools/internal/report && ../../../bench/report.test -test.run XXX -test.bench 'BenchmarkReportShareNothing$' -test.benchtime 5x \
    -test.cpu 2 -test.timeout 30m) | grep '^Benchmark' | tee -a results/report.txt
done
(cd ../tools/internal/report && ../../../bench/report.test -test.run XXX -test.bench 'MemoryPerRequest' -test.benchtime 3x -test.cpu 1) \
  | grep '^Benchmark' | tee -a results/report.txt
rm -f report.test

go run ./report -dir results -out ../BENCHMARKS.md
echo ">> wrote BENCHMARKS.md"
