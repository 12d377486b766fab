# From the repository root, carry [".device", ".tp"]:
#   bash docs/results/bench/2026-12-04-h200-closing/call5-idle-distribution/call.sh
# Call 4 ran the server without the bundled libraries on its path (it never started). This
# call, on one instance: the in-process bench at N=1 (twice, with the per-step idle
# distribution tandem-bench now writes), the server at N=1 in each pipeline with /metrics
# scraped around each of three 512-token streams (the idle, host-wait and busy histograms),
# and the idle step; /proc/stat's steal time around each part says whether the hypervisor
# took the CPUs.
set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
steal() { awk '/^cpu /{print "steal_jiffies", $9, "of", $2+$3+$4+$5+$6+$7+$8+$9}' /proc/stat; }
idle_rows() {
  python3 - "$1" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    print("  %-24s N=%d steps=%d idle_steps=%d idle_p50_us=%.1f p99=%.1f max=%.1f share_over_100us=%.2f"
          % (r["mode"], r["batch"], r["steps"], r["idle_steps"], r["idle_p50_us"],
             r["idle_p99_us"], r["idle_max_us"], r["idle_share_over_100us"]))
PY
}
{
nproc; steal
for round in 1 2; do
  BENCH_BATCHES=1 timeout 300 bash scripts/gpu-session.sh bench 2>&1 | grep -v "build ok"
  idle_rows "$OUT/bench.jsonl"; mv "$OUT/bench.jsonl" "$OUT/bench-$round.jsonl"; steal
done
source .device/prelude.sh
b=build-gpu/bin
for pipeline in double_buffered sync; do
  $b/tandem-server --listen=127.0.0.1:50151 --metrics_listen=127.0.0.1:9551 \
      --pipeline=$pipeline --max_slots=1 2> "$OUT/server-$pipeline.log" &
  server=$!
  for _ in $(seq 120); do
    $b/tandem-cli info --server=127.0.0.1:50151 --timeout=1s > /dev/null 2>&1 && break
    sleep 0.5
  done
  $b/tandem-cli generate "warm up" --server=127.0.0.1:50151 --max_tokens=16 --ignore_eos > /dev/null 2>&1
  for i in 1 2 3; do
    curl -s 127.0.0.1:9551/metrics > "/tmp/before"
    $b/tandem-cli generate "Stream $i of the idle probe" --server=127.0.0.1:50151 \
        --max_tokens=512 --ignore_eos > /dev/null 2>&1
    curl -s 127.0.0.1:9551/metrics > "/tmp/after"
    echo "## $pipeline, stream $i"; steal
    python3 - <<'PY'
def read(p):
    out = {}
    for line in open(p):
        if line.startswith("#") or not line.strip(): continue
        k, v = line.rsplit(" ", 1)
        out[k] = float(v)
    return out
a, b = read("/tmp/before"), read("/tmp/after")
for name in ("tandem_step_gpu_idle_seconds", "tandem_step_host_wait_seconds", "tandem_step_busy_seconds"):
    rows = [(k, b[k] - a.get(k, 0)) for k in b if k.startswith(name + "_bucket")]
    print(name, "count", b[name + "_count"] - a.get(name + "_count", 0),
          "sum_us %.1f" % ((b[name + "_sum"] - a.get(name + "_sum", 0)) * 1e6))
    prev = 0
    for k, v in rows:
        if v != prev:
            print("   ", k.split("le=")[1].rstrip("}"), int(v - prev))
        prev = v
PY
  done
  kill -TERM $server; wait $server
done
steal
bash scripts/gpu-session.sh idle 2>&1 | grep -v "build ok"
steal
echo "== t=$(( $(date +%s) - t0 ))"
} | tee "$OUT/output.txt"
cd "$OUT" && rm -f build.log cmake.log bench.txt ./*.err
ls
