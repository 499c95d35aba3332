#!/usr/bin/env bash
# Instructions per span of the built collectors, counted by valgrind's
# callgrind: the project's distribution without and with the llm_slo pair,
# and the contrib-only peer (bench/peer, v0.161) as pass-through, with
# span_metrics and with signal_to_metrics. Each arm gets exactly 2N and
# then N spans of the load mix on the same timeline; (Ir(2N) − Ir(N)) / N
# is its cost per span, start-up, shutdown and timers cancelling out. One
# P and no asynchronous preemption, so that a run is one thread's
# instructions; the GC runs as in production.
#
# CALLGRIND_N (default 3200 spans), CALLGRIND_REPS (default 2),
# CALLGRIND_SHAPES (default mix; also engine, chunks, semconv: each kind of
# span alone) and CALLGRIND_ARMS narrow or widen the run; the arms export
# the spans over OTLP/HTTP to a sink that discards them, or with
# CALLGRIND_EXPORTER=debug to the debug exporter; CALLGRIND_APPEND=1 keeps
# the previous results and adds to them. Writes
# results/collector_instructions.txt (one line per run) and keeps each
# run's profile in results/callgrind/ (read one with callgrind_annotate).
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p results/bin

if ! command -v valgrind >/dev/null 2>&1; then
  echo ">> installing valgrind (Debian) for the instruction counts"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get install -y -qq valgrind >/dev/null
fi

# The builders generate each distribution's main package; it is linked here
# with -w only (no DWARF), keeping the symbol table callgrind names
# functions by (the builders' own binaries are stripped with -s).
(cd .. && make -s dist-sources)
(cd ../dist && go build -trimpath -ldflags=-w -o ../bench/results/bin/otelcol-llmslo .)
./peer/build.sh
(cd peer/dist && go build -trimpath -ldflags=-w -o ../../results/bin/otelcol-peer .)

# CALLGRIND_APPEND=1 adds to the last results (e.g. the shapes after the mix).
if [ "${CALLGRIND_APPEND:-}" != 1 ]; then
  rm -rf results/callgrind results/collector_instructions.txt
fi
LLMSLO_BENCH_CALLGRIND="$PWD/results/collector_instructions.txt" \
  go test -count=1 -run '^TestCollectorInstructions$' -timeout 600m -v ./ | grep -E '^(---|ok|FAIL|\s+collector_instructions_test)'
