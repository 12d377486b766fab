# Call 5 (carry [".device", ".tp"]), from the repository root:
#   bash docs/results/bench/2026-12-04-h200-context-cap/call5-shift-scatter-order/call.sh
# experiments.diff (temporary switches, for the one-row LayerNorm projections at K = 768,
# 3 columns a warp: GPT-2 small's Q/K/V and fc):
#   shiftload  every lane loads the row's first element (the statistics' shift) beside its
#              share of x, instead of taking it from lane 0 by a shuffle after the loads
#   scatter    the warp's 3 columns reduce-scattered (5 shuffles, not 15; the same tree
#              per column, so the same bits): lanes 0, 8 and 16 write the columns
# FusedLinearTest (bits of a one-row projection against a two-row batch, K = 768 with
# 3 columns a warp among its shapes) under each switch, the N=1 A/B (3 rounds), then why
# a second run in one bench process is slower: the same orders with PyTorch's expandable
# segments (the allocator maps 2 MiB pages into one reserved range).
set -u
here=docs/results/bench/2026-12-04-h200-context-cap/call5-shift-scatter-order
tar -xJf .tp/third_party.tar.xz
git apply "$here/experiments.diff" || exit 1
t0=$(date +%s)
{
timeout 240 bash scripts/gpu-session.sh 2>&1 | grep -v "build ok"
( source .device/prelude.sh
  for e in none shiftload scatter shiftload-scatter; do
    TANDEM_EXPERIMENT=$e timeout 60 ctest --test-dir build-gpu -L gpu --output-on-failure \
        -R "FusedLinear" --timeout 60 > "$OUT/t.log" 2>&1
    echo "$e:"; grep -E "tests passed|Failed|\*\*\*|Expected|Which is" "$OUT/t.log" | head -8
  done )
echo "== t=$(( $(date +%s) - t0 ))"
BUILD_TARGET=tandem-bench AB_VARIANTS="none shiftload scatter shiftload-scatter" AB_ARCHES=gpt2 \
  AB_BATCHES=1 AB_ROUNDS=3 timeout 200 bash scripts/gpu-session.sh ab 2>&1 | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
( source .device/prelude.sh
  b=build-gpu/bin/tandem-bench
  rows() { grep -E "^gpt2" "$OUT/r.txt" | sed "s/^/$1: /"; }
  $b --batch=64,256,1 --modes=double_buffered_graphs > "$OUT/r.txt" 2>&1; rows "after 64 and 256"
  PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True $b --batch=64,256,1 \
    --modes=double_buffered_graphs > "$OUT/r.txt" 2>&1; rows "expandable, after 64 and 256"
  PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True $b --batch=1,1,1 \
    --modes=double_buffered_graphs > "$OUT/r.txt" 2>&1; rows "expandable, three in one process"
  $b --batch=1,1,1 --modes=double_buffered_graphs > "$OUT/r.txt" 2>&1; rows "three in one process"
  tail -3 "$OUT/r.txt" | grep -iv "^gpt2" )
echo "== t=$(( $(date +%s) - t0 ))"
} | tee "$OUT/output.txt"
cd "$OUT" && rm -f build.log cmake.log ab.log ab-*.jsonl ./*.err ./*.csv r.txt t.log
