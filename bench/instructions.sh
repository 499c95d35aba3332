#!/usr/bin/env bash
# Instructions per span, counted by valgrind's callgrind: a repeatable A/B
# on a machine whose timings move by ±20% between runs. Each benchmark arm
# runs at 5 and at 25 iterations; the difference over 20 iterations and the
# arm's spans per iteration is its cost per span, setup and start-up
# cancelling out. One P, no GC, no asynchronous preemption: the count is
# the same from run to run.
#
# Writes results/instructions.txt: "<benchmark> <instructions per span>".
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p results

if ! command -v valgrind >/dev/null 2>&1; then
  echo ">> installing valgrind (Debian) for the instruction counts"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get install -y -qq valgrind >/dev/null
fi

go test -c -o instructions.test ./
trap 'rm -f instructions.test callgrind.out.bench' EXIT
export GOMAXPROCS=1 GOGC=off GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off

# count BENCH N prints the instructions of N iterations and, on the line
# after, the benchmark's spans per iteration (ns/op over ns/span).
count() {
  local out
  out=$(valgrind --tool=callgrind --callgrind-out-file=callgrind.out.bench \
    ./instructions.test -test.run '^$' -test.bench "$1" -test.benchtime "${2}x" 2>/dev/null | grep '^Benchmark')
  grep -m1 '^summary:' callgrind.out.bench | awk '{print $2}'
  echo "$out" | awk '{for (i = 1; i < NF; i++) { if ($(i+1) == "ns/op") op = $i; if ($(i+1) == "ns/span") sp = $i } } END { printf "%.0f\n", op / sp }'
}

: > results/instructions.txt
for shape in vllm_attributes chunks_16 chunks_256; do
  for arm in Processor/copy_only Processor/bare_pass Processor/processor Connector/spanmetrics Connector/llmslo; do
    bench="^Benchmark${arm%%/*}\$/^${shape}\$/^${arm#*/}\$"
    mapfile -t lo < <(count "$bench" 5)
    mapfile -t hi < <(count "$bench" 25)
    per=$(( (hi[0] - lo[0]) / 20 / hi[1] ))
    echo "${arm%%/*}/$shape/${arm#*/} $per" | tee -a results/instructions.txt
  done
done
