# From the repository root, carry [".device", ".tp"]:
#   bash docs/results/bench/2026-12-04-h200-closing/call6-engine-turns/call.sh
# Call 5 found the server's GPU idle at N=1 in a few steps per 512 (idle 0.16-5 ms) while
# every in-process step idles 1.3 us. Which part of the engine thread's turn takes the time?
# engine-turns.patch (applied here only) prints every loop turn whose time outside the
# device wait is over 100 us, with its phases (take: the request queue; schedule; launch;
# collect: the wait and reading the events; complete: the scheduler and the sinks;
# observer: metrics; report: the load report) and the thread's context switches and page
# faults. Runs the in-process bench at N=1 and the server at N=1 (3 x 512 tokens) and
# N=16 (16 x 256) in each pipeline.
set -u
tar -xJf .tp/third_party.tar.xz
git apply docs/results/bench/2026-12-04-h200-closing/call6-engine-turns/engine-turns.patch
t0=$(date +%s)
{
BENCH_BATCHES=1 timeout 300 bash scripts/gpu-session.sh bench 2>&1 | grep -v "build ok"
echo "== in-process slow turns (stderr of tandem-bench)"
grep -h "DIAG" "$OUT"/*.err "$OUT"/bench.txt 2>/dev/null | sort | uniq -c | sort -rn | head -20
source .device/prelude.sh
b=build-gpu/bin
for pipeline in double_buffered sync; do
  $b/tandem-server --listen=127.0.0.1:50151 --metrics_listen=127.0.0.1:9551 \
      --pipeline=$pipeline --max_slots=16 2> "$OUT/server-$pipeline.log" &
  server=$!
  for _ in $(seq 120); do
    $b/tandem-cli info --server=127.0.0.1:50151 --timeout=1s > /dev/null 2>&1 && break
    sleep 0.5
  done
  $b/tandem-cli generate "warm up" --server=127.0.0.1:50151 --max_tokens=16 --ignore_eos > /dev/null 2>&1
  echo "## $pipeline after the warm-up: $(grep -c '^DIAG' "$OUT/server-$pipeline.log") slow turns"
  for i in 1 2 3; do
    $b/tandem-cli generate "Stream $i of the idle probe" --server=127.0.0.1:50151 \
        --max_tokens=512 --ignore_eos > /dev/null 2>&1
  done
  echo "## $pipeline N=1: $(grep -c '^DIAG' "$OUT/server-$pipeline.log") slow turns"
  for i in $(seq 16); do
    $b/tandem-cli generate "Stream $i of the idle probe" --server=127.0.0.1:50151 \
        --max_tokens=256 --ignore_eos > /dev/null 2>&1 &
  done
  wait $(jobs -p | grep -v "^$server$") 2>/dev/null
  echo "## $pipeline N=1 then N=16: $(grep -c '^DIAG' "$OUT/server-$pipeline.log") slow turns"
  kill -TERM $server; wait $server
  grep -n "^DIAG" "$OUT/server-$pipeline.log" | head -80
done
echo "== t=$(( $(date +%s) - t0 ))"
} 2>&1 | tee "$OUT/output.txt"
cd "$OUT" && rm -f build.log cmake.log
ls
