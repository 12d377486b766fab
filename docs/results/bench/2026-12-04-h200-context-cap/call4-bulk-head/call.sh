# Prepared for the next session's first call (carry [".device", ".tp"]), from the repository
# root:
#   bash docs/results/bench/2026-12-04-h200-context-cap/call4-bulk-head/call.sh
# experiments.diff (compiled here with nvcc 13, sm_90: 62-80 registers, no spills) adds
# RowLmHeadBulkKernel under TANDEM_EXPERIMENT=bulk2 / bulk4 / bulk8: the one-row LM head
# (final LayerNorm + head + greedy) streaming its weights through the bulk-copy engine into
# a shared-memory ring of 2, 4 or 8 stages of 16 rows (48, 96 or 192 KiB at K = 768; at most
# 200 KiB; the small ring can sit beside the previous kernel's blocks), a grid of one block
# a multiprocessor, the first stages requested before the wait (up to 25 MB of the
# head's 77 MB at 8 stages, against ~4.8 MB today). Same sums in the same order, so the
# same logits. The call runs the row-head, kernel and engine tests with each switch (only
# RowHeadMatchesTheLayerNormLmHeadAndGreedyKernels reaches the bulk kernel: it takes K
# compiled in, 256-1,024 in fp16/bf16; the hard-rows test runs K = 8), the N=1 A/B (3
# rounds), and the per-kernel N=1 table with bulk8 (Nsight Compute serializes kernels,
# so only the A/B shows an overlap's gain).
set -u
here=docs/results/bench/2026-12-04-h200-context-cap/call4-bulk-head
tar -xJf .tp/third_party.tar.xz
git apply "$here/experiments.diff" || exit 1
t0=$(date +%s)
{
timeout 200 bash scripts/gpu-session.sh 2>&1 | grep -v "build ok"
( source .device/prelude.sh
  for e in bulk2 bulk4 bulk8; do
    TANDEM_EXPERIMENT=$e timeout 100 ctest --test-dir build-gpu -L gpu --output-on-failure \
        -R "RowHead|DecodeKernel|EngineModes" --timeout 120 > "$OUT/gpu-tests-$e.log" 2>&1
    echo "$e:"; grep -E "tests passed|Failed|\*\*\*" "$OUT/gpu-tests-$e.log" | tail -8
  done )
echo "== t=$(( $(date +%s) - t0 ))"
BUILD_TARGET=tandem-bench AB_VARIANTS="none bulk2 bulk4 bulk8" AB_ARCHES=gpt2 AB_BATCHES=1 AB_ROUNDS=3 \
  timeout 150 bash scripts/gpu-session.sh ab 2>&1 | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
TANDEM_EXPERIMENT=bulk8 BUILD_TARGET=tandem-bench PROFILE_BATCHES=1 timeout 100 \
  bash scripts/gpu-session.sh profile 2>&1 | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
} | tee "$OUT/output.txt"
cd "$OUT" && rm -f build.log cmake.log ab.log ab-*.jsonl ./*.err ./*.csv ncu-gpt2-1-order.txt
