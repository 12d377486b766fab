# A second call for the next session (after next-call.sh): at N=1, the attention kernel's
# context split capped at 1, 2 or 4 blocks (it takes 8 at 12 heads x 1 row; attention costs
# ~3.15 us a layer on the chain, the GEMV projections 1.4-1.7), and at N=2 the LayerNorm
# weights in registers (prepared-two-rows.diff, 80 registers a thread; not behind a switch:
# its baseline is prevbench, .prev = the committed tree without the diffs). Both diffs apply
# to c9aa0b9; TANDEM_EXPERIMENT=attn-sN is the splits' temporary switch (none: as it is).
set -u
tar -xJf .tp/third_party.tar.xz
d=docs/results/bench/2026-12-03-h200-n1-chain
for diff in $d/prepared-attention-splits.diff $d/prepared-two-rows.diff; do
  patch -p1 < $diff || exit 1
done
t0=$(date +%s)
BUILD_TARGET=tandem-bench BENCH_BATCHES=1,2 AB_VARIANTS="none attn-s4 attn-s2 attn-s1" AB_ARCHES=gpt2 AB_BATCHES=1,2 AB_ROUNDS=2 \
  timeout 300 bash scripts/gpu-session.sh ab prevbench
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz --exclude='*.ncu-rep' . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
