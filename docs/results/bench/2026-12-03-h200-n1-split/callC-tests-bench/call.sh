# Call C: the committed tree (own statistics, splits by the context's length at 128
# positions): the GPU tests that run the changed defaults through the engine (GPT-2's and the
# Llama family's engine modes, the decode path) and the bench. Call B ran the kernel tests,
# WaitPlacement and a mutant on the same kernels (the attention's split_positions then 0 by
# default); the device time left does not allow the whole suite.
set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
( source .device/prelude.sh > /dev/null 2>&1
  cmake -S . -B build-gpu $DEVICE_CMAKE_ARGS > $OUT/cmake.log 2>&1
  cmake --build build-gpu -j16 --target tandem-bench cuda_runner_test decode_kernel_test llama_cuda_test > $OUT/build.log 2>&1 || grep -A8 -m5 error $OUT/build.log
  echo "== built t=$(( $(date +%s) - t0 ))"
  ctest --test-dir build-gpu -L gpu -R "CudaRunnerTest|EngineModesTest|PrefillKernelTest|DecodeKernelTest|GemvKernelTest|LlamaCudaTest" -E NOT_BUILT --output-on-failure --timeout 150 > $OUT/gpu-tests.log 2>&1; echo "tests rc=$?"
  grep -E "tests passed|tests failed|\*\*\*|Failed" $OUT/gpu-tests.log | head -20 )
echo "== t=$(( $(date +%s) - t0 ))"
BUILD_TARGET=tandem-bench BENCH_BATCHES=1,64,256 timeout 60 bash scripts/gpu-session.sh bench
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
