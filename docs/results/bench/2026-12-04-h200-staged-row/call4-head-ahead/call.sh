# Call 4: the one-row LM head loading 2, 3 or 4 columns a warp ahead instead of 1
# (TANDEM_EXPERIMENT=headA; experiments.diff): its row-head tests under each, then N=1 A/B.
set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
BUILD_TARGET=decode_kernel_test timeout 300 bash scripts/gpu-session.sh > /dev/null 2>&1
for e in head2 head3 head4; do
  TANDEM_EXPERIMENT=$e timeout 60 build-gpu/bin/decode_kernel_test --gtest_filter='*RowHead*' > $OUT/test-$e.log 2>&1
  echo "$e: $(grep -E '^\[  (PASSED|FAILED)' $OUT/test-$e.log | tr '\n' ' ')"
done
echo "== t=$(( $(date +%s) - t0 ))"
BUILD_TARGET=tandem-bench AB_VARIANTS="none head2 head3 head4" AB_ARCHES=gpt2 AB_BATCHES=1 AB_ROUNDS=3 \
  timeout 300 bash scripts/gpu-session.sh ab | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
