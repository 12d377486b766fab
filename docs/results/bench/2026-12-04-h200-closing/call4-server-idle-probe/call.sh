# From the repository root, carry [".device", ".tp"]:
#   bash docs/results/bench/2026-12-04-h200-closing/call4-server-idle-probe/call.sh
# Where the server's GPU idle at N=1 comes from (call 3: 6.4 % double-buffered through the
# server against 0.85-0.89 % in-process in calls 1-2, which ran on another machine
# instance): on one instance, the in-process bench at N=1, the idle step as call 3 ran it,
# then tandem-server (each pipeline, one slot) with /metrics scraped before and after each
# of three 512-token streams, so the idle, host-wait and busy histograms of each can be
# read (a few long stalls, or every step?).
set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
{
BENCH_BATCHES=1 timeout 400 bash scripts/gpu-session.sh bench idle 2>&1 | grep -v "build ok"
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
    echo "## $pipeline, stream $i"
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
echo "== t=$(( $(date +%s) - t0 ))"
} | tee "$OUT/output.txt"
cd "$OUT" && rm -f build.log cmake.log bench.txt ./*.err
ls
