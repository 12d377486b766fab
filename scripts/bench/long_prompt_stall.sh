#!/usr/bin/env bash
# How long a long prompt pauses streams that are already decoding.
#
#   scripts/bench/long_prompt_stall.sh BUILD_DIR OUT_DIR [server flags...]
#
# Starts tandem-server with the given flags (e.g. --device=cpu --model=DIR),
# runs 7 streams (16-token prompts, STREAM_TOKENS new tokens each, default
# 600) through tandem-loadgen and, STALL_DELAY seconds later (default 1.5),
# one prompt of LONG_PROMPT tokens (default 4000). Prints the 7 streams' inter-token latency: p50, p99
# and the longest gap, and the ratio longest / p50. Writes the loadgen JSON
# lines to OUT_DIR/stall-streams.jsonl and OUT_DIR/stall-long.jsonl.
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
lg="$bin/tandem-loadgen --server=127.0.0.1:$port --progress_seconds=0 --warmup=0"
$lg --num_requests=7 --concurrency=7 --prompt_tokens=16 \
    --output_tokens="${STREAM_TOKENS:-600}" --out="$out/stall-streams.jsonl" \
    > "$out/stall-streams.txt" 2>&1 &
streams=$!
sleep "${STALL_DELAY:-1.5}"
$lg --num_requests=1 --concurrency=1 --prompt_tokens="${LONG_PROMPT:-4000}" --output_tokens=1 \
    --seed=7 --out="$out/stall-long.jsonl" > "$out/stall-long.txt" 2>&1
wait $streams
python3 - "$out/stall-streams.jsonl" "$out/stall-long.jsonl" <<'PY'
import json, sys
streams = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
long = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
s = next(x for x in streams if x.get("summary"))
l = next(x for x in long if x.get("summary"))
itl = s["itl"]
arrival = next(x for x in long if not x.get("summary"))["start_unix_s"]
for x in streams:
    if x.get("summary") or "max_itl_s" not in x: continue
    at = x["start_unix_s"] + x["max_itl_end_s"] - arrival
    print(f"  stream: longest gap {1e3 * x['max_itl_s']:.2f} ms, ending {1e3 * at:+.1f} ms "
          f"from the long prompt's arrival")
print(f"streams: {s['completed']} ok, ITL p50 {itl['p50_ms']:.2f} ms, p99 {itl['p99_ms']:.2f} ms, "
      f"longest gap {itl['max_ms']:.2f} ms = {itl['max_ms'] / itl['p50_ms']:.2f} x p50; "
      f"long prompt TTFT {l['ttft']['p50_ms']:.1f} ms ({l['completed']} ok)")
PY
