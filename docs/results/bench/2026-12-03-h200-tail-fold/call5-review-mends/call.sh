# Call 5: the review mends (070fd1c) on the GPU: decode_kernel_test whole (the row head's tests
# with stale parts poisoned between rounds and the ticket checked, the kernel without the greedy
# choice, PublishRows at an offset) and the engine tests (CopyRows' publishing condition).
set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
( source .device/prelude.sh > /dev/null 2>&1
  cmake -S . -B build-gpu $DEVICE_CMAKE_ARGS > $OUT/cmake.log 2>&1
  cmake --build build-gpu -j16 --target decode_kernel_test cuda_runner_test > $OUT/build.log 2>&1 || grep -A8 -m5 error $OUT/build.log
  echo "== built t=$(( $(date +%s) - t0 ))"
  timeout 90 build-gpu/bin/decode_kernel_test > $OUT/decode-kernel-test.log 2>&1; echo "decode_kernel_test rc=$?"
  grep -E "^\[ +(OK|FAILED) +\]|PASSED|FAILED" $OUT/decode-kernel-test.log | cut -c1-120
  timeout 60 build-gpu/bin/cuda_runner_test --gtest_filter='EngineModesTest.*:CudaRunnerTest.*' > $OUT/runner-test.log 2>&1; echo "cuda_runner_test rc=$?"
  grep -E "PASSED|FAILED" $OUT/runner-test.log | cut -c1-120 )
echo "== t=$(( $(date +%s) - t0 ))"
