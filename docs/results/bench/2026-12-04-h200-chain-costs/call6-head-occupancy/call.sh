# Device call 6 (carry [".device", ".tp"]), from the repository root: N=1 A/B in one build,
# three rounds, of the one-row head's occupancy and load depth (experiments.diff):
# head3 = __launch_bounds__(256, 3), 80 registers (36 bytes spilled), 3 blocks a
# multiprocessor (396) instead of 2 (264) at 95 registers; pfl2 = each warp also prefetches
# its column two ahead into L2 (99 registers, still 2 blocks); head3pfl2 = both.
set -u
here=docs/results/bench/2026-12-04-h200-chain-costs/call6-head-occupancy
tar -xJf .tp/third_party.tar.xz
git apply "$here/experiments.diff" || exit 1
t0=$(date +%s)
BUILD_TARGET=tandem-bench AB_VARIANTS="none head3 pfl2 head3pfl2" AB_ARCHES=gpt2 AB_BATCHES=1 \
  AB_ROUNDS=3 timeout 450 bash scripts/gpu-session.sh ab | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
