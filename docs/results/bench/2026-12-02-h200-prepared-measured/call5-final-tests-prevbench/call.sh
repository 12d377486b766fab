set -u
tar -xJf .tp/third_party.tar.xz
rm -rf build-prev
t0=$(date +%s)
TEST_TIMEOUT=300 BENCH_BATCHES=1,64,256 bash scripts/gpu-session.sh test bench prevbench
echo "== t=$(( $(date +%s) - t0 ))"
source .device/prelude.sh > /dev/null 2>&1
f=core/model/cuda/lm_head_kernel.cu
cp $f /tmp/orig.cu
mutant() {
  cmake --build build-gpu -j16 --target cuda_runner_test > $OUT/mutant-$1-build.log 2>&1 || tail -20 $OUT/mutant-$1-build.log
  build-gpu/bin/cuda_runner_test --gtest_filter="$2" > $OUT/mutant-$1.log 2>&1; echo "mutant $1 rc=$?"
  grep -E "^\[  FAILED  \] [A-Z]" $OUT/mutant-$1.log | sort -u | head; grep -c "Failure" $OUT/mutant-$1.log
  cp /tmp/orig.cu $f
}
cp .prev/$f $f; mutant previous-kernel 'DecodeKernelTest.GreedyDecodeMatchesAtenOnHardRows'
sed -i 's/tokens\[b\] = row.index == kNoIndex ? 0 : row.index;/tokens[b] = row.index;/' $f; grep -c "tokens\[b\] = row.index;" $f; mutant no-index 'DecodeKernelTest.GreedyDecodeSkipsMinusInfinityLogits'
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz --exclude='*.ncu-rep' . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
