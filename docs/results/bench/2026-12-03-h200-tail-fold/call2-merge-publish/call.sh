# Call 2: the whole GPU suite with the one-row head's last block merging the parts with all its
# threads (call 1's single thread took 65 us) and the step's tokens and log-probabilities written
# to the host's pinned buffers by one kernel (PublishRows) instead of two copies; then an A/B at
# N = 1, 64, 256 with experiments.diff (temporary): `copies` (the two copies), `nofold` (the old
# tail: LayerNorm, LM head and greedy kernels), `nofold-copies` (both: the previous tree's step),
# `foldnorm` (the fold without the greedy choice).
set -u
tar -xJf .tp/third_party.tar.xz
D=docs/results/bench/2026-12-03-h200-tail-fold/call2-merge-publish
t0=$(date +%s)
TEST_TIMEOUT=300 timeout 330 bash scripts/gpu-session.sh test
echo "== t=$(( $(date +%s) - t0 ))"
patch -p1 < $D/experiments.diff > /dev/null || exit 1
BUILD_TARGET=tandem-bench AB_VARIANTS="none copies nofold nofold-copies foldnorm" AB_ARCHES=gpt2 AB_BATCHES=1,64,256 AB_ROUNDS=2 \
  timeout 200 bash scripts/gpu-session.sh ab | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz --exclude='*.ncu-rep' . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
