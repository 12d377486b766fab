# Call 1 (carry [".device", ".tp", ".prev"]), from the repository root, with .prev made by
#   rm -rf .prev && mkdir .prev && git archive 58cad65 | tar -x -C .prev && rm -rf .prev/docs
# then:
#   bash docs/results/bench/2026-12-04-h200-reduce-scatter/call1-tests-bench-ab/call.sh
# The tree: 13fd2e8 (the GEMV's block column sums reduce-scattered) over 58cad65 (.prev: the
# one-row LayerNorm projections' column sums reduce-scattered). The whole GPU suite, the
# bench (N = 1, 64, 256) on both builds, then N=1 alternating between the builds (GPT-2
# small, 3 rounds) and Llama-3.2-1B N=1 (2 rounds), each run its own process.
set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
{
TEST_TIMEOUT=300 BENCH_BATCHES=1,64,256 timeout 420 bash scripts/gpu-session.sh test bench prevbench \
  2>&1 | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
( source .device/prelude.sh
  rows() { grep -E "^(gpt2|llama)" "$OUT/r.txt" | sed "s/^/$1: /"; }
  for round in 1 2 3; do
    for b in build-gpu build-prev; do
      $b/bin/tandem-bench --batch=1 --modes=double_buffered_graphs > "$OUT/r.txt" 2>&1
      rows "$b $round"
    done
  done
  for round in 1 2; do
    for b in build-gpu build-prev; do
      $b/bin/tandem-bench --arch=llama --size=llama-3.2-1b --batch=1 \
        --modes=double_buffered_graphs > "$OUT/r.txt" 2>&1
      rows "$b llama $round"
    done
  done )
echo "== t=$(( $(date +%s) - t0 ))"
} | tee "$OUT/output.txt"
cd "$OUT" && rm -f build.log cmake.log cmake-prev.log build-prev.log r.txt ./*.err
