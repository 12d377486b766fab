# Call 1 (carry [".device", ".tp"]), from the repository root:
#   bash docs/results/bench/2026-12-04-h200-context-cap/call1-tests-cap-ab/call.sh
# The whole GPU suite and the bench (N = 1, 64, 256) on the committed tree, N=1 at a
# 700-token prompt, then experiments.diff (TANDEM_EXPERIMENT=cap4: 4 context splits
# whatever the slots' positions, the previous rule) and the N=1 A/B at prompt 64 and 700.
set -u
here=docs/results/bench/2026-12-04-h200-context-cap/call1-tests-cap-ab
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
{
git log --oneline -1
TEST_TIMEOUT=200 BENCH_BATCHES=1,64,256 timeout 330 bash scripts/gpu-session.sh test bench
echo "== t=$(( $(date +%s) - t0 ))"
( source .device/prelude.sh
  echo "prompt 700:"
  build-gpu/bin/tandem-bench --batch=1 --prompt_tokens=700 --modes=double_buffered_graphs \
      > "$OUT/bench-700.txt" 2>&1
  grep -E "^gpt2" "$OUT/bench-700.txt" )
git apply "$here/experiments.diff" || exit 1
BUILD_TARGET=tandem-bench AB_VARIANTS="none cap4" AB_ARCHES=gpt2 AB_BATCHES=1 AB_ROUNDS=3 \
  timeout 150 bash scripts/gpu-session.sh ab 2>&1 | grep -v "build ok"
echo "prompt 700:"
BUILD_TARGET=tandem-bench AB_VARIANTS="none cap4" AB_ARCHES=gpt2 AB_BATCHES=1 AB_ROUNDS=2 \
  AB_FLAGS=--prompt_tokens=700 timeout 80 bash scripts/gpu-session.sh ab 2>&1 | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
} | tee "$OUT/output.txt"
cd "$OUT" && rm -f build.log cmake.log ab.log bench.txt ab-*.jsonl
