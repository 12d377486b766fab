# Prepared for the next session's second call, issued right after call6-next-call/call.sh on the same
# warm machine (carry [".device", ".tp"]), from the repository root:
#
#   bash docs/results/bench/2026-12-04-h200-stats-latency/call7-ahead5-profile/call.sh
#
# It applies experiments.diff (temporary switch TANDEM_EXPERIMENT=ahead5: the one-row
# 512-thread attention with 5 positions a thread, so a preloaded chunk and a split hold 320
# positions, this bench's longest context: no cluster merge at all at prompt 64; locally
# ptxas gives the bf16 kernel 107 registers, no spills), rebuilds, runs the attention, kernel
# and engine tests with the switch on, then the N=1 A/B at prompt 64 and 700, three and two
# rounds, and Nsight Compute's per-kernel N=1 table of the committed kernels (switch off).
set -u
here=docs/results/bench/2026-12-04-h200-stats-latency/call7-ahead5-profile
tar -xJf .tp/third_party.tar.xz
git apply "$here/experiments.diff" || exit 1
t0=$(date +%s)
{
timeout 200 bash scripts/gpu-session.sh 2>&1 | grep -v "build ok"
( source .device/prelude.sh
  TANDEM_EXPERIMENT=ahead5 ctest --test-dir build-gpu -L gpu --output-on-failure \
      -R "DecodeAttention|DecodeKernel|EngineModes" --timeout 120 > "$OUT/gpu-tests-ahead5.log" 2>&1
  echo "ahead5:"; grep -E "tests passed|Failed|\*\*\*" "$OUT/gpu-tests-ahead5.log" | tail -8 )
echo "== t=$(( $(date +%s) - t0 ))"
BUILD_TARGET=tandem-bench AB_VARIANTS="none ahead5" AB_ARCHES=gpt2 AB_BATCHES=1 AB_ROUNDS=3 \
  timeout 100 bash scripts/gpu-session.sh ab 2>&1 | grep -v "build ok"
echo "prompt 700:"
BUILD_TARGET=tandem-bench AB_VARIANTS="none ahead5" AB_ARCHES=gpt2 AB_BATCHES=1 AB_ROUNDS=2 \
  AB_FLAGS=--prompt_tokens=700 timeout 80 bash scripts/gpu-session.sh ab 2>&1 | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
BUILD_TARGET=tandem-bench PROFILE_BATCHES=1 timeout 150 bash scripts/gpu-session.sh profile 2>&1 | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
} | tee "$OUT/output.txt"
cd "$OUT" && rm -f build.log cmake.log ab.log ab-*.jsonl ./*.err ncu-gpt2-1-order.txt
