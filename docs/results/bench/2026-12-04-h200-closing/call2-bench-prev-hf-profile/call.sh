# From the repository root, carry [".device", ".tp", ".prev"], with .prev/ the tree of
# b95e079 (the last commit before issue 15's first measured change, 2854af5):
#   rm -rf .prev && mkdir .prev && git archive b95e079 | tar -x -C .prev &&
#     rm -rf .prev/docs .prev/third_party
#   bash docs/results/bench/2026-12-04-h200-closing/call2-bench-prev-hf-profile/call.sh
# This tree's bench table (each (mode, N) its own process), the same table on the build
# issue 15 started from, transformers' generate on the same checkpoint, and the per-kernel
# table of one steady step at N=1 and 64. At most 8 files come back.
set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
{
BENCH_BATCHES=1,64,256 PROFILE_BATCHES="1 64" timeout 570 \
  bash scripts/gpu-session.sh bench prevbench hf profile 2>&1 | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
} | tee "$OUT/output.txt"
cd "$OUT" && rm -f build.log cmake.log build-prev.log cmake-prev.log bench.txt bench-prev.txt \
  hf.txt ./*.err ./*.csv ./*-order.txt
ls
