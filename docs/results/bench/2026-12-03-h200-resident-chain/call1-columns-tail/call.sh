# Call 1: one-block-a-multiprocessor grids for the one-row projections (the LayerNorm
# projections at up to 4 columns a warp, the residual GEMVs a block per group): their tests,
# the A/B against the previous shapes in the same build (temporary switches cols1, gemvold),
# and the head/tail kernels' chain costs (prepared-dup-tail.diff, temporary).
set -u
tar -xJf .tp/third_party.tar.xz
patch -p1 < docs/results/bench/2026-12-03-h200-n1-split/prepared-dup-tail.diff > /dev/null || exit 1
t0=$(date +%s)
( source .device/prelude.sh > /dev/null 2>&1
  cmake -S . -B build-gpu $DEVICE_CMAKE_ARGS > $OUT/cmake.log 2>&1
  cmake --build build-gpu -j16 --target tandem-bench fused_linear_test llama_cuda_test decode_kernel_test > $OUT/build.log 2>&1 || grep -A8 -m5 error $OUT/build.log
  echo "== built t=$(( $(date +%s) - t0 ))"
  ctest --test-dir build-gpu -E NOT_BUILT -R "FusedLinearTest|GemvKernelTest|DecodeKernelTest|WaitPlacement" --output-on-failure --timeout 250 > $OUT/tests.log 2>&1; echo "tests rc=$?"
  grep -E "Test +#|tests passed|tests failed|FAIL" $OUT/tests.log | cut -c1-200 | head -40 )
echo "== t=$(( $(date +%s) - t0 ))"
BUILD_TARGET=tandem-bench AB_VARIANTS="none cols1 gemvold cols1,gemvold" AB_ARCHES=gpt2 AB_BATCHES=1,2 AB_ROUNDS=2 \
  timeout 200 bash scripts/gpu-session.sh ab | grep -v "build ok"
cp $OUT/ab.log $OUT/ab-shapes.log
echo "== t=$(( $(date +%s) - t0 ))"
BUILD_TARGET=tandem-bench AB_VARIANTS="none dup-embed dup-finalln dup-lmhead dup-greedy" AB_ARCHES=gpt2 AB_BATCHES=1 AB_ROUNDS=2 \
  timeout 150 bash scripts/gpu-session.sh ab | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz --exclude='*.ncu-rep' . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
