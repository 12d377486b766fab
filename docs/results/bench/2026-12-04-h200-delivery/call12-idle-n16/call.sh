# From the repository root, carry [".device", ".tp"]:
#   bash docs/results/bench/2026-12-04-h200-delivery/call12-idle-n16/call.sh
# Call 10 read the GPU idle through the server at N=16 as 6.66 % (calls 8 and 9: 0.51 and
# 1.00 %). Where is it? The server (double-buffered, 16 slots) with /metrics scraped around
# each load, the per-step idle, host-wait and busy histograms printed: three rounds of 16
# tandem-cli processes (the idle step's load: 16 processes started one after another) and
# three rounds of tandem-loadgen (one process, 16 streams at once, 256 tokens each);
# then the idle step twice. /proc/stat's steal time around each part.
set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
steal() { awk '/^cpu /{print "steal_jiffies", $9, "of", $2+$3+$4+$5+$6+$7+$8+$9}' /proc/stat; }
histograms() {
  python3 - <<'PY'
def read(p):
    out = {}
    for line in open(p):
        if line.startswith("#") or not line.strip(): continue
        k, v = line.rsplit(" ", 1)
        out[k] = float(v)
    return out
a, b = read("/tmp/before"), read("/tmp/after")
d = lambda k: b.get(k, 0) - a.get(k, 0)
i, u = d("tandem_gpu_idle_seconds_total"), d("tandem_gpu_busy_seconds_total")
print("idle_fraction %.4f idle_us %.1f busy_us %.1f tokens %d" % (i / (i + u), i * 1e6, u * 1e6,
      d("tandem_generation_tokens_total")))
for name in ("tandem_step_gpu_idle_seconds", "tandem_step_host_wait_seconds", "tandem_step_busy_seconds"):
    rows = [(k, d(k)) for k in b if k.startswith(name + "_bucket")]
    print(name, "count", d(name + "_count"), "sum_us %.1f" % (d(name + "_sum") * 1e6))
    prev = 0
    for k, v in rows:
        if v != prev:
            print("   ", k.split("le=")[1].rstrip("}"), int(v - prev))
        prev = v
PY
}
{
nproc; steal
BENCH_BATCHES=1 timeout 300 bash scripts/gpu-session.sh bench 2>&1 | grep -v "build ok" | tail -3
source .device/prelude.sh
b=build-gpu/bin
$b/tandem-server --listen=127.0.0.1:50151 --metrics_listen=127.0.0.1:9551 \
    --pipeline=double_buffered --max_slots=16 2> "$OUT/server.log" &
server=$!
for _ in $(seq 120); do
  $b/tandem-cli info --server=127.0.0.1:50151 --timeout=1s > /dev/null 2>&1 && break
  sleep 0.5
done
$b/tandem-cli generate "warm up" --server=127.0.0.1:50151 --max_tokens=16 --ignore_eos > /dev/null 2>&1
$b/tandem-loadgen --server=127.0.0.1:50151 --progress_seconds=0 --num_requests=16 \
    --concurrency=16 --prompt_tokens=8 --output_tokens=16 > /dev/null 2>&1
for round in 1 2 3; do
  curl -s 127.0.0.1:9551/metrics > /tmp/before
  pids=""
  for i in $(seq 16); do
    $b/tandem-cli generate "Stream $i of the idle measurement" --server=127.0.0.1:50151 \
        --max_tokens=256 --ignore_eos > /dev/null 2>&1 &
    pids="$pids $!"
  done
  wait $pids
  curl -s 127.0.0.1:9551/metrics > /tmp/after
  echo "## 16 tandem-cli processes, round $round"; steal; histograms
done
for round in 1 2 3; do
  curl -s 127.0.0.1:9551/metrics > /tmp/before
  $b/tandem-loadgen --server=127.0.0.1:50151 --progress_seconds=0 --num_requests=16 \
      --concurrency=16 --prompt_tokens=8 --output_tokens=256 2>&1 | grep requests
  curl -s 127.0.0.1:9551/metrics > /tmp/after
  echo "## tandem-loadgen, 16 at once, round $round"; steal; histograms
done
kill -TERM $server; wait $server
for round in 1 2; do
  echo "## idle step, round $round"
  bash scripts/gpu-session.sh idle 2>&1 | grep -v "build ok"; steal
done
echo "== t=$(( $(date +%s) - t0 ))"
} 2>&1 | tee "$OUT/output.txt"
cd "$OUT" && rm -f build.log cmake.log bench.txt ./*.err
ls
