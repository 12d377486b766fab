# Call 4: leads for the next session on 82bac68 (shapes.diff, temporary switches): the LayerNorm
# projections at 2 columns a warp (lncols2), fc2 at 8 columns a block (fc2wide, 96 blocks),
# attention-out at 4 columns a block (outnarrow, 192 blocks).
set -u
tar -xJf .tp/third_party.tar.xz
patch -p1 < docs/results/bench/2026-12-03-h200-resident-chain/call4-shapes/tried-shapes.diff > /dev/null || exit 1
t0=$(date +%s)
BUILD_TARGET=tandem-bench AB_VARIANTS="none lncols2 fc2wide outnarrow" AB_ARCHES=gpt2 AB_BATCHES=1,2 AB_ROUNDS=2 \
  timeout 250 bash scripts/gpu-session.sh ab
echo "== t=$(( $(date +%s) - t0 ))"
rm -f $OUT/*.log.gz; ls $OUT
