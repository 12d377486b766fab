# Call 2 (carry [".device", ".tp", ".prev"]), from the repository root, with .prev = 58cad65
# (as in call 1), then:
#   bash docs/results/bench/2026-12-04-h200-reduce-scatter/call2-restricted/call.sh
# The tree: the GEMV's reduce-scatter only in plain-input projections of 4+ columns (GPT-2's
# attention-out and fc2, Llama's o). The GPU tests of the kernels it touches, then N=1
# alternating between this build and 58cad65's: GPT-2 small 3 rounds, Llama-3.2-1B 2.
set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
{
timeout 200 bash scripts/gpu-session.sh 2>&1 | grep -v "build ok"
( source .device/prelude.sh
  timeout 120 ctest --test-dir build-gpu -L gpu --output-on-failure --timeout 100 \
      -R "Gemv|FusedLinear|EngineModes|Llama|DecodeKernel|WaitPlacement" > "$OUT/gpu-tests.log" 2>&1
  grep -E "Passed|Failed|tests passed" "$OUT/gpu-tests.log" )
echo "== t=$(( $(date +%s) - t0 ))"
BENCH_BATCHES=1 timeout 150 bash scripts/gpu-session.sh prevbench 2>&1 | grep -v "build ok"
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
