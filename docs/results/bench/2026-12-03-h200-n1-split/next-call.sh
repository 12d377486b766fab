# A call for the next session (carry [".device", ".tp"]; .tp/third_party.tar.xz as usual):
# each of the step's head and tail kernels launched twice at N=1 (prepared-dup-tail.diff,
# temporary switches), so the step's growth is that kernel's cost on the chain, as call 2 of
# ../2026-12-03-h200-n1-chain/ measured the layer kernels: the embedding, the final LayerNorm,
# the LM head, the greedy choice. With the layers' chain (~12 x 10-11 us) they should account
# for N=1's ~200 us; what they cost picks the next target.
set -u
tar -xJf .tp/third_party.tar.xz
patch -p1 < docs/results/bench/2026-12-03-h200-n1-split/prepared-dup-tail.diff || exit 1
t0=$(date +%s)
BUILD_TARGET=tandem-bench AB_VARIANTS="none dup-embed dup-finalln dup-lmhead dup-greedy" AB_ARCHES=gpt2 \
  AB_BATCHES=1 AB_ROUNDS=2 timeout 300 bash scripts/gpu-session.sh ab
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz --exclude='*.ncu-rep' . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
