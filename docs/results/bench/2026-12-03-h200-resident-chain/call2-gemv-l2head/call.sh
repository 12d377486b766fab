# Call 2: the residual GEMVs with a block per group (kOneGroup) and one column's sum a thread;
# the LayerNorm projections' columns a warp forced (cols1, lncols2, lncols4); the LM head's
# first rows persisting in L2 (l2head.diff, temporary). Tests of the changed kernels first.
set -u
tar -xJf .tp/third_party.tar.xz
patch -p1 < docs/results/bench/2026-12-03-h200-resident-chain/call2-gemv-l2head/tried-l2head.diff > /dev/null || exit 1
t0=$(date +%s)
( source .device/prelude.sh > /dev/null 2>&1
  cmake -S . -B build-gpu $DEVICE_CMAKE_ARGS > $OUT/cmake.log 2>&1
  cmake --build build-gpu -j16 --target tandem-bench fused_linear_test llama_cuda_test decode_kernel_test > $OUT/build.log 2>&1 || grep -A8 -m5 error $OUT/build.log
  echo "== built t=$(( $(date +%s) - t0 ))"
  ctest --test-dir build-gpu -E NOT_BUILT -R "FusedLinearTest|GemvKernelTest|DecodeKernelTest|LlamaCudaTest|EngineModesTest|WaitPlacement" --output-on-failure --timeout 250 > $OUT/tests.log 2>&1; echo "tests rc=$?"
  grep -E "Test +#|tests passed|tests failed|FAIL" $OUT/tests.log | cut -c1-200 | head -40 )
echo "== t=$(( $(date +%s) - t0 ))"
BUILD_TARGET=tandem-bench AB_VARIANTS="none gemvloop cols1 lncols2 lncols4 l2head" AB_ARCHES=gpt2 AB_BATCHES=1,2 AB_ROUNDS=2 \
  timeout 200 bash scripts/gpu-session.sh ab | grep -v "build ok"
grep -h "l2head" $OUT/ab.log | head -3
echo "== t=$(( $(date +%s) - t0 ))"
BUILD_TARGET=tandem-bench AB_VARIANTS="none gemvloop" AB_ARCHES=llama AB_BATCHES=1 AB_ROUNDS=2 \
  timeout 120 bash scripts/gpu-session.sh ab | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz --exclude='*.ncu-rep' . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
