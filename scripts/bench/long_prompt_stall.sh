#!/usr/bin/env bash
# How long a long prompt pauses streams that are already decoding.
#
#   scripts/bench/long_prompt_stall.sh BUILD_DIR OUT_DIR [server flags...]
#
# Starts tandem-server with the given flags (e.g. --device=cpu --model=DIR),
# runs 7 streams (16-token prompts, STREAM_TOKENS new tokens each, default
# 1500: at ~2 ms a token on the CPU they outlast the prompt) through
# tandem-loadgen and, STALL_DELAY seconds later (default 1.5), one prompt of
# LONG_PROMPT tokens (default 4000). Prints the 7 streams' inter-token latency: p50, p99
# and the longest gap, and the ratio longest / p50; then the gaps' p50 / p99 while it was
# prefilled and in the second before it arrived (the machine's own noise). Writes the loadgen JSON
# lines to OUT_DIR/stall-streams.jsonl and OUT_DIR/stall-long.jsonl. Exits 1 when no
# stream got a token while the prompt was prefilled (nothing was measured).
set -euo pipefail
build=$1 out=$2
shift 2
bin=$build/bin
port=${STALL_PORT:-50171}
mkdir -p "$out"
"$bin/tandem-server" --listen=127.0.0.1:$port --metrics_listen=127.0.0.1:0 "$@" \
    > "$out/stall-server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null || true' EXIT
for _ in $(seq 1 240); do
  "$bin/tandem-cli" info --server=127.0.0.1:$port --timeout=1s >/dev/null 2>&1 && break
  sleep 0.5
done
lg="$bin/tandem-loadgen --server=127.0.0.1:$port --progress_seconds=0 --warmup=0 --token_times"
$lg --num_requests=7 --concurrency=7 --prompt_tokens=16 \
    --output_tokens="${STREAM_TOKENS:-1500}" --out="$out/stall-streams.jsonl" \
    > "$out/stall-streams.txt" 2>&1 &
streams=$!
sleep "${STALL_DELAY:-1.5}"
$lg --num_requests=1 --concurrency=1 --prompt_tokens="${LONG_PROMPT:-4000}" --output_tokens=1 \
    --seed=7 --out="$out/stall-long.jsonl" > "$out/stall-long.txt" 2>&1
wait $streams
python3 - "$out/stall-streams.jsonl" "$out/stall-long.jsonl" <<'PY'
import json, statistics, sys
streams = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
long = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
s = next(x for x in streams if x.get("summary"))
l = next(x for x in long if x.get("summary"))
r = next(x for x in long if not x.get("summary"))
arrival, ttft = r["start_unix_s"], r.get("ttft_s", r["e2e_s"])
# quiet: the gaps in the second before the prompt arrived, when nothing but
# the streams' own decoding ran (the machine's noise floor).
before, during, quiet, overall = [], [], [], (0, 0)
for x in streams:
    if x.get("summary"): continue
    times = [x["start_unix_s"] + t - arrival for t in x["token_times_s"]]
    for a, b in zip(times, times[1:]):
        gap = b - a
        if b < 0: before.append(gap)
        if -1.0 <= b < 0: quiet.append(gap)
        if 0 <= b <= ttft + 0.005: during.append(gap)
        if gap > overall[0]: overall = (gap, b)
typical = statistics.median(before) if before else float("nan")
worst = max(during) if during else float("nan")
def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))] if v else float("nan")
print(f"streams: {s['completed']} ok; typical gap (median before the long prompt) "
      f"{1e3 * typical:.2f} ms; longest gap while it was prefilled {1e3 * worst:.2f} ms "
      f"= {worst / typical:.2f} x typical; long prompt ({r['prompt_tokens']} tokens) TTFT "
      f"{1e3 * ttft:.1f} ms ({l['completed']} ok); longest gap of the run "
      f"{1e3 * overall[0]:.2f} ms, ending {1e3 * overall[1]:+.1f} ms from its arrival")
print(f"gaps while it was prefilled: p50 {1e3 * pct(during, 0.5):.2f} ms, p99 "
      f"{1e3 * pct(during, 0.99):.2f} ms; in the second before it arrived: p50 "
      f"{1e3 * pct(quiet, 0.5):.2f} ms, p99 {1e3 * pct(quiet, 0.99):.2f} ms, longest "
      f"{1e3 * max(quiet, default=float('nan')):.2f} ms")
if not during:
    print("no stream got a token while the prompt was prefilled: they ended before it "
          "arrived (raise STREAM_TOKENS) or stalled through all of it", file=sys.stderr)
    sys.exit(1)
PY
