# Device call 8 (carry [".device", ".tp"]), from the repository root: N=1 A/B in one build,
# three rounds, of `early` (experiments.diff): the one-row LayerNorm projections (Q/K/V, fc)
# unpack their weights and LayerNorm constants from bf16 to float before the programmatic
# wait instead of after it (the same arithmetic in the same order), so ~120 of a warp's ~780
# instructions (call 7: LOP3 + SHF are 26 % of them) leave the chain, if ptxas keeps them there.
set -u
here=docs/results/bench/2026-12-04-h200-chain-costs/call8-early-unpack
tar -xJf .tp/third_party.tar.xz
git apply "$here/experiments.diff" || exit 1
t0=$(date +%s)
BUILD_TARGET=tandem-bench AB_VARIANTS="none early" AB_ARCHES=gpt2 AB_BATCHES=1 \
  AB_ROUNDS=3 timeout 240 bash scripts/gpu-session.sh ab | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
