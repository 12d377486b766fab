# Call 3: the tree to commit (7f78bfa, the head-epilogue fold of call 2 reverted, and the next
# step's stream waiting on an event without timing, `done`, recorded right after `end`): the
# whole GPU suite; then with experiments.diff (temporary switches) the N=1 A/B of what sets
# GPU idle between steps: none (the tree), timedwait (the wait on the timing event `end`, as
# before), onestream (both parities on one stream: diagnostic only), pubout (the publishing
# kernel launched after the graph, as before 7f78bfa); then none / timedwait at N = 64, 256.
# carry [".device", ".tp"].
set -u
here=docs/results/bench/2026-12-04-h200-folds/call3-idle-tests
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
TEST_TIMEOUT=120 timeout 330 bash scripts/gpu-session.sh test
echo "== t=$(( $(date +%s) - t0 ))"
git apply "$here/experiments.diff" || exit 1
BUILD_TARGET=tandem-bench AB_VARIANTS="none timedwait onestream pubout" AB_ARCHES=gpt2 AB_BATCHES=1 AB_ROUNDS=2 \
  timeout 200 bash scripts/gpu-session.sh ab | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
BUILD_TARGET=tandem-bench AB_VARIANTS="none timedwait" AB_ARCHES=gpt2 AB_BATCHES=64,256 AB_ROUNDS=1 \
  timeout 80 bash scripts/gpu-session.sh ab | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
