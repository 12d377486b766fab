# Call 5 (carry [".device", ".tp", ".prev"]; .prev: `git archive 22d6ba4`, docs removed),
# from the repository root, on fc1360d (the statistics' tree sums) with experiments.diff
# applied (TANDEM_EXPERIMENT=cap4: the 512-thread attention in clusters of 4, not 2): the
# whole GPU suite; N=1 A/B none vs cap4 at prompt 64 and at prompt 700, two rounds each;
# the previous build's (22d6ba4) N=1 bench at both prompts; this tree's bench at
# N = 1, 2, 4, 8, 64, 256.
set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
{
TEST_TIMEOUT=200 timeout 300 bash scripts/gpu-session.sh test
echo "== t=$(( $(date +%s) - t0 ))"
BUILD_TARGET=tandem-bench AB_VARIANTS="none cap4" AB_ARCHES=gpt2 AB_BATCHES=1 AB_ROUNDS=2 \
  timeout 100 bash scripts/gpu-session.sh ab 2>&1 | grep -v "build ok"
echo "prompt 700:"
BUILD_TARGET=tandem-bench AB_VARIANTS="none cap4" AB_ARCHES=gpt2 AB_BATCHES=1 AB_ROUNDS=2 \
  AB_FLAGS=--prompt_tokens=700 timeout 100 bash scripts/gpu-session.sh ab 2>&1 | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
BUILD_TARGET=tandem-bench BENCH_BATCHES=1 timeout 200 bash scripts/gpu-session.sh prevbench 2>&1 | grep -v "build ok"
( source .device/prelude.sh
  build-prev/bin/tandem-bench --batch=1 --prompt_tokens=700 --modes=double_buffered_graphs \
      --out="$OUT/bench-700-prev.jsonl" > "$OUT/bench-700-prev.txt" 2>&1
  grep -v "^[IWE]20" "$OUT/bench-700-prev.txt" | grep -E "^(model|gpt2)" )
echo "== t=$(( $(date +%s) - t0 ))"
BUILD_TARGET=tandem-bench BENCH_BATCHES=1,2,4,8,64,256 timeout 120 bash scripts/gpu-session.sh bench 2>&1 | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
} | tee "$OUT/output.txt"
cd "$OUT" && rm -f build.log cmake.log cmake-prev.log build-prev.log ab.log ab-*.jsonl bench-prev.txt
