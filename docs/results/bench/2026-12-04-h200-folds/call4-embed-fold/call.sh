# Call 4: the one-row step's embedding and layer 0's LayerNorm + Q/K/V as one kernel
# (EmbedNormLinear; uncommitted tree on 7f78bfa): the whole GPU suite (with the new
# FusedLinearTest.EmbedNormLinear... test), then the N=1 A/B against the two kernels in the
# same build (experiments.diff: nofold), then the tree's bench at N = 1, 64, 256.
# carry [".device", ".tp"].
set -u
here=docs/results/bench/2026-12-04-h200-folds/call4-embed-fold
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
TEST_TIMEOUT=120 timeout 300 bash scripts/gpu-session.sh test
echo "== t=$(( $(date +%s) - t0 ))"
git apply "$here/experiments.diff" || exit 1
BUILD_TARGET=tandem-bench AB_VARIANTS="none nofold" AB_ARCHES=gpt2 AB_BATCHES=1 AB_ROUNDS=3 \
  timeout 150 bash scripts/gpu-session.sh ab | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
git apply -R "$here/experiments.diff" || exit 1
BUILD_TARGET=tandem-bench BENCH_BATCHES=1,64,256 timeout 100 bash scripts/gpu-session.sh bench | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
