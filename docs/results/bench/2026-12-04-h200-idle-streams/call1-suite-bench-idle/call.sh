# Prepared for the next session: call 5's GPU suite stopped at its time limit (27 of 35 passed,
# none failed), so the first call reruns the whole suite on the committed code, with room for
# a cold build, then its bench at N = 1, 64, 256. carry [".device", ".tp"]. From the
# repository root:
#
#   bash docs/results/bench/2026-12-04-h200-folds/next-call.sh        the suite and the bench
#   bash docs/results/bench/2026-12-04-h200-folds/next-call.sh idle   and then (about 2 minutes
#       more) the N=1 idle question with next-experiments.diff, in one build: `pubplain` (the
#       graph's publishing node without programmatic dependent launch) and `onestream` (both
#       parities on one stream, again) against the tree
set -u
here=docs/results/bench/2026-12-04-h200-folds
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
TEST_TIMEOUT=120 timeout 400 bash scripts/gpu-session.sh test
echo "== t=$(( $(date +%s) - t0 ))"
BUILD_TARGET=tandem-bench BENCH_BATCHES=1,64,256 timeout 120 bash scripts/gpu-session.sh bench | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
if [ "${1:-}" = idle ]; then
  git apply "$here/next-experiments.diff" || exit 1
  BUILD_TARGET=tandem-bench AB_VARIANTS="none pubplain onestream" AB_ARCHES=gpt2 AB_BATCHES=1 \
    AB_ROUNDS=2 timeout 150 bash scripts/gpu-session.sh ab | grep -v "build ok"
  echo "== t=$(( $(date +%s) - t0 ))"
fi
cd $OUT && tar czf /tmp/all.tgz . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
