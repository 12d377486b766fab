# Prepared for the next session (not run): the attention kernel's split merge with one cluster
# barrier instead of two (prepared-one-barrier-merge.diff). Each block writes its softmax part
# into the first block's shared memory after the barrier's first phase, which every block
# arrives at on entry (relaxed) and waits for just before the writes, so it rarely stalls.
# Then one full phase; the first block merges from its own shared memory and nothing waits to
# exit. The merge's arithmetic and order are unchanged, so the bits should be too.
# Call 5 measured a cluster barrier at ~0.6 us, and N=1 in this bench merges 2-4 splits in
# 3/4 of its steps. Expected: N=1 a few us less; N=64 / N=256 unchanged (one split).
# Check: ptxas now spills 8 bytes in the speculative (3, 4) kernel (N=256's) where it spilled
# none. Run with carry [".device", ".tp", ".prev"], .prev = this tree:
#   rm -rf .prev && mkdir .prev && git archive HEAD | tar -x -C .prev && rm -rf .prev/docs
set -u
tar -xJf .tp/third_party.tar.xz
git apply docs/results/bench/2026-12-03-h200-out-norm-fc/prepared-one-barrier-merge.diff || exit 1
t0=$(date +%s)
TEST_TIMEOUT=120 timeout 330 bash scripts/gpu-session.sh test
echo "== t=$(( $(date +%s) - t0 ))"
BUILD_TARGET=tandem-bench BENCH_BATCHES=1,2,64,256 timeout 240 bash scripts/gpu-session.sh bench prevbench
echo "== t=$(( $(date +%s) - t0 ))"
# With one barrier a split costs less: the positions a split takes before the next, again
# (prepared-split-positions-switch.diff, temporary: TANDEM_EXPERIMENT=spN; none = 128).
git apply docs/results/bench/2026-12-03-h200-out-norm-fc/prepared-split-positions-switch.diff || exit 1
BUILD_TARGET=tandem-bench AB_VARIANTS="none sp64 sp256 sp1024" AB_ARCHES=gpt2 AB_BATCHES=1 AB_ROUNDS=2 \
  timeout 150 bash scripts/gpu-session.sh ab | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz --exclude='*.ncu-rep' . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
