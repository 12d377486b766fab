# Device call 4 (carry [".device", ".tp"]), from the repository root: N=1 A/B in one build,
# three rounds, of two temporary switches (experiments.diff): dup-head launches the one-row
# head (final LayerNorm + LM head + greedy) twice, the first's outputs unused, so the step's
# growth is the head's cost on the chain; gemv96 gives the attention-out projection
# (K = 96 vectors) 96-thread blocks instead of 256, of which 160 threads held zeros.
set -u
here=docs/results/bench/2026-12-04-h200-chain-costs/call4-head
tar -xJf .tp/third_party.tar.xz
git apply "$here/experiments.diff" || exit 1
t0=$(date +%s)
BUILD_TARGET=tandem-bench AB_VARIANTS="none dup-head gemv96" AB_ARCHES=gpt2 AB_BATCHES=1 \
  AB_ROUNDS=3 timeout 400 bash scripts/gpu-session.sh ab | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
