# Call A: the tree = main + the one-row LayerNorm projection computing its own statistics
# (bench vs prevbench, .prev = main 51333df), and A/B at N=1 and 2 of temporary switches:
# samelayer (every layer computes with layer 0's weights: the HBM ceiling), l2aheadN /
# l2plainN (layer i + N's weights asked into L2 on a side branch as layer i starts; bulk TMA
# prefetch or prefetch.global.L2), attn-sN (the attention kernel's split capped at N).
set -u
tar -xJf .tp/third_party.tar.xz
patch -p1 < .tp/prepared-attention-splits.diff || exit 1
patch -p1 < .tp/exp-l2.diff || exit 1
t0=$(date +%s)
BUILD_TARGET=tandem-bench BENCH_BATCHES=1,2,64 timeout 200 bash scripts/gpu-session.sh bench prevbench
echo "== t=$(( $(date +%s) - t0 ))"
BUILD_TARGET=tandem-bench AB_VARIANTS="none samelayer l2ahead1 l2ahead2 l2plain1 attn-s4 attn-s2 attn-s1" AB_ARCHES=gpt2 AB_BATCHES=1,2 AB_ROUNDS=2 \
  timeout 300 bash scripts/gpu-session.sh ab
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz --exclude='*.ncu-rep' . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
