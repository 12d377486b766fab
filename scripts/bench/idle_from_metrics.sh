#!/usr/bin/env bash
# Reads the GPU idle fraction from tandem-server's /metrics in each pipeline
# mode under the same load: N concurrent tandem-cli streams of G tokens. A
# warm-up request runs first (the first steps of a process load kernels and
# take far longer), and every figure is the difference between a scrape before
# and one after the load.
# SERVER_CPUS / CLIENT_CPUS (taskset lists, e.g. 0-7 and 8-15): run the server and the
# tandem-cli processes on those CPUs. Unset, all share every CPU; at N=16 on a 16-core
# machine the clients' start-up then takes the server's CPUs for 0.04-10 ms now and then
# (docs/results/bench/2026-12-04-h200-delivery/, calls 12-13).
# Usage: [SERVER_ARGS="--model=DIR ..."] [SERVER_CPUS=L] [CLIENT_CPUS=L]
#        scripts/bench/idle_from_metrics.sh BUILD_DIR [N] [G]
set -euo pipefail
build="${1:-build}"; n="${2:-16}"; g="${3:-256}"
# value METRICS NAME: the sample NAME (with its labels) in an exposition.
value() { echo "$1" | awk -v k="$2" '$1 == k {print $2}'; }
# delta NAME: after - before.
delta() {
  awk -v a="$(value "$before" "$1")" -v b="$(value "$after" "$1")" 'BEGIN{printf "%.9f", b - a}'
}
# Command prefixes: taskset on the given CPUs, or nothing (taskset execs the command, so $!
# stays the server's PID).
server_on=(); [ -z "${SERVER_CPUS:-}" ] || server_on=(taskset -c "$SERVER_CPUS")
client_on=(); [ -z "${CLIENT_CPUS:-}" ] || client_on=(taskset -c "$CLIENT_CPUS")
for mode in sync double_buffered; do
  "${server_on[@]}" "$build/bin/tandem-server" --listen=127.0.0.1:50151 --metrics_listen=127.0.0.1:9551 \
      --pipeline=$mode --max_slots=$n ${SERVER_ARGS:-} 2>/tmp/idle-$mode.log &
  server=$!
  for _ in $(seq 120); do
    "$build/bin/tandem-cli" info --server=127.0.0.1:50151 --timeout=1s >/dev/null 2>&1 && break
    sleep 0.5
  done
  "$build/bin/tandem-cli" generate "warm up" --server=127.0.0.1:50151 --max_tokens=16 \
      --ignore_eos >/dev/null 2>&1
  before=$(curl -s 127.0.0.1:9551/metrics)
  for i in $(seq "$n"); do
    "${client_on[@]}" "$build/bin/tandem-cli" generate "Stream $i of the idle measurement" --server=127.0.0.1:50151 \
        --max_tokens="$g" --ignore_eos >/dev/null 2>&1 &
  done
  wait $(jobs -p | grep -v "^$server$") 2>/dev/null || true
  after=$(curl -s 127.0.0.1:9551/metrics)
  idle=$(delta tandem_gpu_idle_seconds_total)
  busy=$(delta tandem_gpu_busy_seconds_total)
  steps=$(delta 'tandem_step_duration_seconds_count{phase="decode"}')
  decode=$(delta 'tandem_step_duration_seconds_sum{phase="decode"}')
  wait_sum=$(delta tandem_step_host_wait_seconds_sum)
  tokens=$(delta tandem_generation_tokens_total)
  awk -v m="$mode" -v i="$idle" -v b="$busy" -v s="$steps" -v d="$decode" -v w="$wait_sum" \
      -v t="$tokens" 'BEGIN{printf "%s: gpu_idle_s=%.6f gpu_busy_s=%.6f idle_fraction=%.4f " \
      "decode_steps=%d generated_tokens=%d us_per_step=%.1f decode_us_per_step=%.1f " \
      "host_wait_us_per_step=%.1f\n", m, i, b, i / (i + b), s, t, (i + b) / s * 1e6, d / s * 1e6,
      w / s * 1e6}'
  kill -TERM $server; wait $server || true
done
