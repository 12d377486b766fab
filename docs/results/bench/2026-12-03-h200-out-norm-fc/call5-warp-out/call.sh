# Call 5 (the session's last 332 device seconds): the one-row attention-out projection on the
# fused linear kernel (a warp per column, no block barrier; K = 768 fits the weights a lane
# loads before the wait) instead of the GEMV (warpout), and both residual projections so
# (warpall), against the tree (none). experiments.diff: temporary switches.
set -u
tar -xJf .tp/third_party.tar.xz
patch -p1 < docs/results/bench/2026-12-03-h200-out-norm-fc/call5-warp-out/experiments.diff > /dev/null || exit 1
BUILD_TARGET=tandem-bench AB_VARIANTS="none warpout warpall" AB_ARCHES=gpt2 AB_BATCHES=1 AB_ROUNDS=2 \
  bash scripts/gpu-session.sh ab | grep -v "build ok"
cd $OUT && tar czf /tmp/all.tgz --exclude='*.ncu-rep' . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
