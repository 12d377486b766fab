# Call 3 (right after call 2, on its warm machine and build): the one-row LayerNorm
# projections at 1, 2, 3 (the rule's choice for GPT-2 small: none) and 4 columns a warp, K
# compiled in (experiments.diff: temporary TANDEM_EXPERIMENT=lncolsC switches), N=1, 3 rounds.
set -u
here=docs/results/bench/2026-12-04-h200-compiled-k/call3-lncols
[ -d third_party ] || tar -xJf .tp/third_party.tar.xz
git apply "$here/experiments.diff" || exit 1
t0=$(date +%s)
BUILD_TARGET=tandem-bench AB_VARIANTS="none lncols1 lncols2 lncols4" AB_ARCHES=gpt2 \
  AB_BATCHES=1 AB_ROUNDS=3 timeout 400 bash scripts/gpu-session.sh ab 2>&1 |
  grep -v "build ok" | tee "$OUT/output.txt"
echo "== t=$(( $(date +%s) - t0 ))" | tee -a "$OUT/output.txt"
