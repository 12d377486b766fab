#!/usr/bin/env bash
# Reads the GPU idle fraction from tandem-server's /metrics in each pipeline
# mode under the same load: N concurrent tandem-cli streams of G tokens.
# Usage: tests/bench/idle_from_metrics.sh BUILD_DIR [N] [G]
set -euo pipefail
build="${1:-build}"; n="${2:-16}"; g="${3:-256}"
for mode in sync double_buffered; do
  "$build/bin/tandem-server" --listen=127.0.0.1:50151 --metrics_listen=127.0.0.1:9551 \
      --pipeline=$mode --max_slots=$n 2>/tmp/idle-$mode.log &
  server=$!
  for _ in $(seq 120); do
    "$build/bin/tandem-cli" info --server=127.0.0.1:50151 --timeout=1s >/dev/null 2>&1 && break
    sleep 0.5
  done
  for i in $(seq "$n"); do
    "$build/bin/tandem-cli" generate "Stream $i of the idle measurement" --server=127.0.0.1:50151 \
        --max_tokens="$g" --ignore_eos >/dev/null 2>&1 &
  done
  wait $(jobs -p | grep -v "^$server$") 2>/dev/null || true
  metrics=$(curl -s 127.0.0.1:9551/metrics)
  idle=$(echo "$metrics" | awk '/^tandem_gpu_idle_seconds_total /{print $2}')
  busy=$(echo "$metrics" | awk '/^tandem_gpu_busy_seconds_total /{print $2}')
  steps=$(echo "$metrics" | awk '/^tandem_step_duration_seconds_count\{phase="decode"\}/{print $2}')
  tokens=$(echo "$metrics" | awk '/^tandem_generation_tokens_total /{print $2}')
  echo "$mode: tandem_gpu_idle_seconds_total=$idle tandem_gpu_busy_seconds_total=$busy" \
       "idle_fraction=$(awk -v i="$idle" -v b="$busy" 'BEGIN{printf "%.4f", i/(i+b)}')" \
       "decode_steps=$steps generated_tokens=$tokens"
  kill -TERM $server; wait $server || true
done
