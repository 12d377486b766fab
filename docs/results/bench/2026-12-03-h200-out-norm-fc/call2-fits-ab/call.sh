# Call 2: call 1's kernel with the fc columns a warp chosen so that every cluster fits the
# device at once (call 1: OutNormFcSupports was false at GPT-2 small, 16 clusters of 8 do not
# fit an H200 at 147 KB a block), at most 160 registers a thread; the whole GPU suite, the A/B
# against the two kernels it replaces (experiments.diff, temporary: nooutfc) at N = 1 and 64,
# and Nsight Compute's kernel times of an N=1 step.
set -u
tar -xJf .tp/third_party.tar.xz
D=docs/results/bench/2026-12-03-h200-out-norm-fc/call2-fits-ab
t0=$(date +%s)
TEST_TIMEOUT=300 timeout 330 bash scripts/gpu-session.sh test
echo "== t=$(( $(date +%s) - t0 ))"
patch -p1 < $D/experiments.diff > /dev/null || exit 1
BUILD_TARGET=tandem-bench AB_VARIANTS="none nooutfc" AB_ARCHES=gpt2 AB_BATCHES=1,64 AB_ROUNDS=3 \
  timeout 150 bash scripts/gpu-session.sh ab | grep -v "build ok"
patch -R -p1 < $D/experiments.diff > /dev/null
echo "== t=$(( $(date +%s) - t0 ))"
BUILD_TARGET=tandem-bench PROFILE_BATCHES="1" timeout 150 bash scripts/gpu-session.sh profile | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz --exclude='*.ncu-rep' . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
