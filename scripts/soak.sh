#!/usr/bin/env bash
# soak.sh: the built collector under steady load with a backend outage in
# the middle, checked for loss and for double counting.
#
# llmloadgen -> otelcol-llmslo (the llm_slo pair, a sending queue, retries
# without a time limit) -> llmslo capture as the backend. The backend is
# stopped OUTAGE_AT after the load starts and restarted on the same file
# OUTAGE later, so the restart path of capture is soaked too. At the end:
# the spans the generator sent, the spans in the capture file (read by
# llmslo report), the collector's own counts and the connector's
# llm_slo_requests_total summed over its series must all be equal.
#
#   make soak                                  # 10 minutes at 1,500 requests/s
#   SOAK_DURATION=120s SOAK_RATE=500 make soak
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${SOAK_DURATION:-600s}
rate=${SOAK_RATE:-1500}
outage_at=${SOAK_OUTAGE_AT:-240}
outage=${SOAK_OUTAGE:-60}
dir=$(mktemp -d -t llmslo-soak.XXXXXX)
echo ">> soak: ${duration} at ${rate} requests/s, backend down ${outage}s from ${outage_at}s; files in $dir"

(cd tools && go build -o ../bin/ ./cmd/llmloadgen ./cmd/llmslo)
cat > "$dir/collector.yaml" <<YAML
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:24317
processors:
  memory_limiter:
    check_interval: 1s
    limit_mib: 2048
    spike_limit_mib: 512
  llm_slo:
    slos:
      - name: interactive
        ttft: 500ms
        tpot: 15ms
        e2e: 2s
        objective: 95
  batch:
    timeout: 200ms
connectors:
  llm_slo:
    metrics_flush_interval: 5s
exporters:
  otlp_http/backend:
    endpoint: http://127.0.0.1:24320
    compression: none
    sending_queue:
      enabled: true
      sizer: requests
      queue_size: 100000
    retry_on_failure:
      enabled: true
      max_elapsed_time: 0
  prometheus:
    endpoint: 127.0.0.1:29464
service:
  pipelines:
    traces:
      receivers: [otlp]
      processors: [memory_limiter, llm_slo, batch]
      exporters: [otlp_http/backend, llm_slo]
    metrics:
      receivers: [llm_slo]
      exporters: [prometheus]
  telemetry:
    metrics:
      level: normal
      readers:
        - pull:
            exporter:
              prometheus:
                host: 127.0.0.1
                port: 28888
YAML

pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
bin/llmslo capture --listen 127.0.0.1:24320 --out "$dir/traces.pb" 2>>"$dir/capture.log" &
cap=$!
dist/otelcol-llmslo --config "$dir/collector.yaml" 2>"$dir/collector.log" &
col=$!
pids+=("$col")
sleep 5
start=$(date +%s)
bin/llmloadgen -endpoint 127.0.0.1:24317 -rate "$rate" -replicas 64 -duration "$duration" \
  -truth "$dir/truth.jsonl" >"$dir/loadgen.log" 2>&1 &
gen=$!
pids+=("$gen")
sleep "$outage_at"
echo ">> backend down at $(($(date +%s) - start))s"
kill -INT "$cap"; wait "$cap" || true
sleep "$outage"
echo ">> backend up at $(($(date +%s) - start))s"
bin/llmslo capture --listen 127.0.0.1:24320 --out "$dir/traces.pb" 2>>"$dir/capture.log" &
cap=$!
pids+=("$cap")
wait "$gen"
echo ">> $(tail -1 "$dir/loadgen.log")"
metric() { curl -s "$1" | awk -v m="$2" '$1 ~ "^"m {s += $2} END {printf "%d\n", s}'; }
for _ in $(seq 1 120); do
  [[ $(metric 127.0.0.1:28888/metrics otelcol_exporter_queue_size) == 0 ]] && break
  sleep 5
done
sleep 10
sent=$(wc -l <"$dir/truth.jsonl")
accepted=$(metric 127.0.0.1:28888/metrics otelcol_receiver_accepted_spans)
exported=$(metric 127.0.0.1:28888/metrics 'otelcol_exporter_sent_spans[{].*otlp_http/backend')
counted=$(metric 127.0.0.1:29464/metrics 'llm_slo_requests_total[{].*llm_slo_name="interactive"')
rss=$(ps -o rss= -p "$col")
kill -INT "$cap"; wait "$cap" || true
kill -TERM "$col"; wait "$col" || true
captured=$(bin/llmslo report --quiet --format json "$dir/traces.pb" | python3 -c 'import json,sys; print(json.load(sys.stdin)["spans"])')
printf '%-44s %s\n' "spans sent (the generator's truth)" "$sent" "accepted by the collector" "$accepted" \
  "exported to the backend" "$exported" "in the capture file (llmslo report)" "$captured" \
  "llm_slo_requests_total, summed" "$counted" "collector RSS at the end (KiB)" "$rss"
if [[ $sent == "$accepted" && $sent == "$exported" && $sent == "$captured" && $sent == "$counted" ]]; then
  echo ">> soak: nothing lost, nothing counted twice"
  rm -rf "$dir"
else
  echo ">> soak: counts differ; files kept in $dir"
  exit 1
fi
