# From the repository root, with 7a64cac (the delivery threads before the review) in .prev/
# and carry [".device", ".tp", ".prev"]:
#   rm -rf .prev && mkdir .prev && git archive 7a64cac | tar -x -C .prev && rm -rf .prev/docs .prev/third_party
#   bash docs/results/bench/2026-12-04-h200-delivery/call13-idle-n16-ab/call.sh
# Call 12: at N=16 the GPU idle through the server is a few 0.6-10 ms gaps while 16 tandem-cli
# processes start on the server's 16 cores (1.8-4.3 %); with one load-generator process it is
# 0.7-1.0 %. Two questions, alternating on one instance: does the review's Flush wait
# (63b52e5: the engine waits while a delivery thread has not taken the previous turn) make
# it worse than 7a64cac? And does it go when the clients run on other cores than the server
# (server on CPUs 0-7, the 16 tandem-cli processes on 8-15)?
# As run on 2026-12-05, .prev/ also lacked tests/, deploy/ and README.md (removed to keep the
# working tree under the device's 64 MiB): client/CMakeLists.txt builds tests/parity/, so the
# 7a64cac build failed (cmake-prev-tail.txt), its servers never started and the call ran past
# its 560 s. Only the 5a636cb rows measured. Keep tests/ in .prev/ to rerun it.
set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
{
BENCH_BATCHES=1 timeout 400 bash scripts/gpu-session.sh bench prevbench 2>&1 | grep -v "build ok"
cmake --build build-prev -j16 --target tandem-server > "$OUT/build-prev-server.log" 2>&1 ||
  { grep -A8 -m5 error "$OUT/build-prev-server.log"; }
source .device/prelude.sh
cli=build-gpu/bin/tandem-cli
# run BUILD LABEL SERVER_CPUS CLIENT_CPUS: the server (double-buffered, 16 slots), a warm-up,
# then two rounds of 16 tandem-cli streams x 256 tokens, /metrics read around each.
run() {
  taskset -c "$3" "$1/bin/tandem-server" --listen=127.0.0.1:50151 --metrics_listen=127.0.0.1:9551 \
      --pipeline=double_buffered --max_slots=16 2> "/tmp/server-$2.log" &
  server=$!
  for _ in $(seq 120); do
    $cli info --server=127.0.0.1:50151 --timeout=1s > /dev/null 2>&1 && break
    sleep 0.5
  done
  pids=""
  for i in $(seq 16); do
    taskset -c "$4" $cli generate "warm up $i" --server=127.0.0.1:50151 --max_tokens=32 --ignore_eos > /dev/null 2>&1 &
    pids="$pids $!"
  done
  wait $pids
  for round in 1 2; do
    before=$(curl -s 127.0.0.1:9551/metrics)
    pids=""
    for i in $(seq 16); do
      taskset -c "$4" $cli generate "Stream $i of the idle measurement" --server=127.0.0.1:50151 \
          --max_tokens=256 --ignore_eos > /dev/null 2>&1 &
      pids="$pids $!"
    done
    wait $pids
    after=$(curl -s 127.0.0.1:9551/metrics)
    python3 - "$2" "$round" "$before" "$after" <<'PY'
import sys
def read(text):
    out = {}
    for line in text.splitlines():
        if line.startswith("#") or not line.strip(): continue
        k, v = line.rsplit(" ", 1)
        out[k] = float(v)
    return out
a, b = read(sys.argv[3]), read(sys.argv[4])
d = lambda k: b.get(k, 0) - a.get(k, 0)
i, u = d("tandem_gpu_idle_seconds_total"), d("tandem_gpu_busy_seconds_total")
name = "tandem_step_gpu_idle_seconds"
rows, prev, gaps = [(k, d(k)) for k in b if k.startswith(name + "_bucket")], 0, []
for k, v in rows:
    if v != prev and not k.endswith('le="1e-05"}'):
        gaps.append("%s:%d" % (k.split("le=")[1].strip('}"'), v - prev))
    prev = v
print("%-28s round %s idle_fraction %.4f steps %d tokens %d gaps over 10us (le:count) %s"
      % (sys.argv[1], sys.argv[2], i / (i + u), d(name + "_count"),
         d("tandem_generation_tokens_total"), " ".join(gaps) or "none"))
PY
  done
  kill -TERM $server; wait $server
}
for ab in 1 2; do
  run build-gpu "5a636cb" 0-15 0-15
  run build-prev "7a64cac" 0-15 0-15
done
for ab in 1 2; do
  run build-gpu "5a636cb-pinned" 0-7 8-15
  run build-prev "7a64cac-pinned" 0-7 8-15
done
echo "== t=$(( $(date +%s) - t0 ))"
} 2>&1 | tee "$OUT/output.txt"
cd "$OUT" && rm -f build.log cmake.log bench.txt build-prev.log cmake-prev.log build-prev-server.log
ls
