#!/usr/bin/env bash
# Builds the contrib-only peer distribution (builder-config.yaml) into
# bench/peer/dist/otelcol-peer with the collector builder of its release.
# The first build downloads and compiles contrib's modules: minutes.
set -euo pipefail
cd "$(dirname "$0")"
version=v0.161.0
tools="$PWD/.tools"
if [ ! -x "$tools/builder-$version" ]; then
  echo ">> installing the collector builder $version for the peer"
  mkdir -p "$tools"
  GOBIN="$tools" go install "go.opentelemetry.io/collector/cmd/builder@$version"
  mv "$tools/builder" "$tools/builder-$version"
fi
if [ -x dist/otelcol-peer ] && [ dist/otelcol-peer -nt builder-config.yaml ]; then
  exit 0
fi
echo ">> building the peer distribution (log: bench/peer/dist/build.log)"
mkdir -p dist
if ! "$tools/builder-$version" --config builder-config.yaml > dist/build.log 2>&1; then
  tail -30 dist/build.log
  exit 1
fi
dist/otelcol-peer components | grep -E '^\s*- name: (signal_to_metrics|span_metrics|transform)' || true
