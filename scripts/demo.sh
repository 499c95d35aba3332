#!/usr/bin/env bash
# The demo behind `make run`: start the built collector on config/demo.yaml,
# send the sample spans of testdata, print what the collector exported, and
# stop everything it started, also on Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."

log=$(mktemp -t llmslo-demo.XXXXXX.log)
traces=$(mktemp -t llmslo-demo-traces.XXXXXX.pb.gz)
pid=""
capture_pid=""
stop() {
  if [[ -n "$1" ]] && kill -0 "$1" 2>/dev/null; then
    kill -"$2" "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
  fi
}
cleanup() {
  stop "$pid" TERM
  stop "$capture_pid" INT
}
trap cleanup EXIT INT TERM

# The tools fit their tables to the terminal themselves (a narrower layout
# when the wide one would wrap); output to a file or a pipe gets $COLUMNS,
# else 120 columns.

# Compile the demo tools before starting anything: on a cold cache this
# takes a while, and progress.sh says so instead of staying silent.
mkdir -p bin
scripts/progress.sh "compiling the demo tools (bin/sendtraces, bin/llmloadgen, bin/llmslo)" \
  sh -c "cd tools && go build -o ../bin/ ./cmd/sendtraces ./cmd/llmloadgen ./cmd/llmslo"

echo ">> starting dist/otelcol-llmslo on config/demo.yaml (log: $log)"
dist/otelcol-llmslo --config config/demo.yaml >"$log" 2>&1 &
pid=$!
for _ in $(seq 1 100); do
  if curl -fsS http://127.0.0.1:13133/ >/dev/null 2>&1; then break; fi
  if ! kill -0 "$pid" 2>/dev/null; then echo "collector exited:"; cat "$log"; exit 1; fi
  sleep 0.1
done

samples=(vllm sglang trtllm openllmetry openllmetry_legacy openlit openinference semconv litellm v1 v3 non_llm)
files=()
for s in "${samples[@]}"; do files+=("testdata/traces/$s/input.yaml"); done
echo ">> sending the sample spans of testdata/traces"
bin/sendtraces -endpoint 127.0.0.1:4317 -receive 127.0.0.1:4319 -timeout 60s "${files[@]}"

# The capture starts after the samples are back, so the report at the end
# is the load's alone: the samples are requests of other models and
# producers, and mixed into the load's groups they would skew them. The
# collector does not retry the samples' export to it (config/demo.yaml).
echo
echo ">> llmslo capture: the collector's otlp_http/report exporter -> $traces"
bin/llmslo capture --listen 127.0.0.1:4320 --out "$traces" 2>>"$log" &
capture_pid=$!
for _ in $(seq 1 100); do
  if curl -sS -o /dev/null http://127.0.0.1:4320/ 2>/dev/null; then break; fi
  if ! kill -0 "$capture_pid" 2>/dev/null; then echo "llmslo capture exited:"; cat "$log"; exit 1; fi
  sleep 0.1
done

echo
load=(-rate "${RATE:-20}")
if [ -n "${RAMP:-}" ]; then
  load=(-ramp "$RAMP")
  echo ">> driving the collector with the load generator for ${DURATION:-30s}, rising from ${RAMP%%:*} to ${RAMP##*:} requests/s"
else
  echo ">> driving the collector with the load generator for ${DURATION:-30s} at ${RATE:-20} requests/s"
fi
echo ">> (Prometheus exposition of the same metrics: http://127.0.0.1:9464/metrics)"
incident=()
if [ -n "${INCIDENT:-}" ]; then
  incident=(-incident-model llama-3.1-8b-instruct -incident-kind "$INCIDENT" -incident-at 10s)
fi
bin/llmloadgen -endpoint 127.0.0.1:4317 -listen 127.0.0.1:4319 -duration "${DURATION:-30s}" "${load[@]}" -flush 2s "${incident[@]}"
echo ">> done; stopping the collector"
stop "$pid" TERM
stop "$capture_pid" INT
echo
echo ">> llmslo report on the captured traces (the SLO and capacity part; the whole report: llmslo-report.html)"
bin/llmslo report --quiet --config config/demo.yaml "$traces" | sed -n '/^SLO /,/^Latency/p' | sed '$d'
bin/llmslo report --quiet --config config/demo.yaml --format html --out llmslo-report.html "$traces"
echo ">> wrote llmslo-report.html (open it in a browser); the traces stay in $traces"
