# Device call 3 (carry [".device", ".tp"]), from the repository root: the tree with the
# temporary switches (experiments.diff: noparts = the attention kernel's cluster merge and the
# plain projection, as before; sp<P> = the parts' splits at most P positions each): N=1 A/B in
# one build, two rounds; the bench at N = 1, 64, 256; then the GPU suite.
set -u
here=docs/results/bench/2026-12-04-h200-chain-costs/call3-parts
tar -xJf .tp/third_party.tar.xz
git apply "$here/experiments.diff" || exit 1
t0=$(date +%s)
BUILD_TARGET=tandem-bench AB_VARIANTS="none noparts sp64 sp1024" AB_ARCHES=gpt2 AB_BATCHES=1 \
  AB_ROUNDS=2 timeout 330 bash scripts/gpu-session.sh ab | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
BUILD_TARGET=tandem-bench BENCH_BATCHES=1,64,256 timeout 80 bash scripts/gpu-session.sh bench \
  | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
TEST_TIMEOUT=120 timeout $(( 570 - ($(date +%s) - t0) )) bash scripts/gpu-session.sh test
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
