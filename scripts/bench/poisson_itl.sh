#!/usr/bin/env bash
# Inter-token latency under Poisson arrivals at several prefill stall ratios,
# with every token's arrival time (what makes ITL p99 / p50).
#
#   OUT=DIR [LOADGEN_FLAGS=...] [SERVER_FLAGS=...] [ITL_TAG=...] \
#       scripts/bench/poisson_itl.sh BUILD_DIR RATIO...
#
# For each RATIO: starts tandem-server --prefill_stall_ratio=RATIO (GPU
# defaults), warms it up, measures saturation (64 in flight, 256 prompt,
# 256 output), then 600 Poisson arrivals at 80 % of it and 64 streams at
# once (128 prompt, 256 output), both with --token_times. Writes
# OUT/probe-{sat,poisson,64}-RATIO.jsonl (+ .txt), the server's /metrics
# (OUT/probe-metrics-RATIO.txt) and log; prints the ITL rows and a
# histogram of the Poisson run's gaps in 0.1 ms bins (a RATIO given again
# runs again, its files tagged -2, -3, ...). LOADGEN_API=completions
# or chat: through the OpenAI-compatible HTTP API instead of gRPC. LOADGEN_FLAGS and
# SERVER_FLAGS: extra tandem-loadgen / tandem-server flags (e.g.
# --channels=64); ITL_TAG: appended to the file names' RATIO.
set -uo pipefail
bin=$1/bin
shift
# A port nothing listens on now (the OS picks it).
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
declare -A runs  # a RATIO given again: its files get -2, -3, ...
for ratio in "$@"; do
  runs[$ratio]=$((${runs[$ratio]:-0} + 1))
  r=$ratio$([ "${runs[$ratio]}" = 1 ] || echo "-${runs[$ratio]}")${ITL_TAG:-}
  port=$(free_port); http=$(free_port)  # a fresh pair per server
  $bin/tandem-server --listen=127.0.0.1:$port --metrics_listen=127.0.0.1:$http \
      --prefill_stall_ratio="$ratio" ${SERVER_FLAGS:-} > "$OUT/probe-server-$r.log" 2>&1 &
  s=$!
  for _ in $(seq 1 240); do
    $bin/tandem-cli info --server=127.0.0.1:$port --timeout=1s >/dev/null 2>&1 && break
    sleep 0.5
  done
  lg="$bin/tandem-loadgen --server=127.0.0.1:$port --progress_seconds=0 ${LOADGEN_FLAGS:-}"
  # LOADGEN_API=completions|chat: through the OpenAI-compatible HTTP API
  # (each stream its own connection), every token an event (--logprobs).
  [ -n "${LOADGEN_API:-}" ] && lg="$lg --api=$LOADGEN_API --http=127.0.0.1:$http --logprobs"
  $lg --num_requests=64 --concurrency=64 --prompt_tokens=128 --output_tokens=64 > /dev/null 2>&1
  $lg --num_requests=256 --concurrency=64 --prompt_tokens=256 --output_tokens=256 \
      --out="$OUT/probe-sat-$r.jsonl" > "$OUT/probe-sat-$r.txt" 2>&1
  rate=$(python3 -c "import json,sys; s=[json.loads(l) for l in open(sys.argv[1])][-1]; print(round(0.8*s['requests_per_s'],1))" "$OUT/probe-sat-$r.jsonl")
  scrape() {
    python3 -c "import urllib.request as u; print(u.urlopen('http://127.0.0.1:$http/metrics').read().decode())" \
        > "$1" || true
  }
  scrape "$OUT/probe-metrics-before-poisson-$r.txt"
  $lg --num_requests=600 --request_rate="$rate" --prompt_tokens=256 --output_tokens=256 \
      --token_times --out="$OUT/probe-poisson-$r.jsonl" > "$OUT/probe-poisson-$r.txt" 2>&1
  scrape "$OUT/probe-metrics-after-poisson-$r.txt"
  $lg --num_requests=64 --concurrency=64 --prompt_tokens=128 --output_tokens=256 \
      --token_times --out="$OUT/probe-64-$r.jsonl" > "$OUT/probe-64-$r.txt" 2>&1
  scrape "$OUT/probe-metrics-$r.txt"
  kill $s; wait $s
  echo "## stall ratio $ratio ${LOADGEN_FLAGS:-} ${SERVER_FLAGS:-}: Poisson at $rate req/s, then 64 at once"
  grep -E "^requests|^ITL|^TTFT" "$OUT/probe-poisson-$r.txt"
  grep -E "^ITL" "$OUT/probe-64-$r.txt"
  python3 - "$OUT/probe-poisson-$r.jsonl" <<'PY'
import collections, json, sys
gaps, first, rest = [], [], []  # every gap; each stream's first one; the later ones
for line in open(sys.argv[1]):
    t = json.loads(line).get("token_times_s")
    if not t: continue
    stream = [b - a for a, b in zip(t, t[1:])]
    gaps += stream
    if len(stream) > 1:
        first.append(stream[0])
        rest += stream[1:]
bins = collections.Counter(min(int(g * 1e4), 30) for g in gaps)
print("Poisson gaps per 0.1 ms bin (30: >= 3 ms):",
      " ".join(f"{k / 10:.1f}:{bins[k]}" for k in sorted(bins)))
def pct(v, q): return sorted(v)[min(len(v) - 1, int(q * len(v)))] * 1e3
if first:
    print(f"Poisson first gaps p50 / p99 {pct(first, .5):.3f} / {pct(first, .99):.3f} ms; "
          f"later gaps {pct(rest, .5):.3f} / {pct(rest, .99):.3f} ms")
PY
  # How the 64-at-once run's steps reached the client (burst length, how far
  # a stream's place in a burst moves between steps).
  python3 scripts/bench/arrival_spread.py "$OUT/probe-64-$r.jsonl" | sed 's/^/64 at once: /'
  # The Poisson run's steps (tandem_step_busy_seconds after minus before):
  # the median step's bucket and the longest step's.
  python3 - "$OUT/probe-metrics-before-poisson-$r.txt" "$OUT/probe-metrics-after-poisson-$r.txt" <<'PY'
import re, sys
def buckets(path):
    out = {}
    for line in open(path):
        m = re.match(r'tandem_step_busy_seconds_bucket\{le="([^"]+)"\} (\S+)', line)
        if m: out[float(m.group(1))] = float(m.group(2))
    return out
before, after = buckets(sys.argv[1]), buckets(sys.argv[2])
if not after: sys.exit(print("no tandem_step_busy_seconds in /metrics"))
bounds = sorted(after)
counts = [after[b] - before.get(b, 0) for b in bounds]  # cumulative
total = counts[-1]
median = next(b for b, c in zip(bounds, counts) if c >= total / 2)
longest = next(b for b, c in zip(bounds, counts) if c >= total)
print(f"Poisson steps: {total:.0f}; median step <= {median * 1e3:.3f} ms, "
      f"longest <= {longest * 1e3:.3f} ms ({longest / median:.2f}x the median's bucket)")
PY
done
