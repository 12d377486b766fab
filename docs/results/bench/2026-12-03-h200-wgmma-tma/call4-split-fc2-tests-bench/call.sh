set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
( source .device/prelude.sh > /dev/null 2>&1
  cmake -S . -B build-gpu $DEVICE_CMAKE_ARGS > $OUT/cmake.log 2>&1
  cmake --build build-gpu -j16 --target tandem-bench cuda_runner_test wgmma_linear_test tandem_model > $OUT/build.log 2>&1 || { grep -B2 -A12 -m5 "error" $OUT/build.log | head -60; exit 1; }
  echo "== built t=$(( $(date +%s) - t0 ))"
  cd build-gpu && timeout 200 ctest -R "WgmmaLinear|WaitPlacement|EngineModes|DecodeKernel|CudaRunnerTest" --timeout 150 > $OUT/gpu-tests.log 2>&1; echo "ctest rc=$?"
  grep -E "Test +#|tests passed|FAIL" $OUT/gpu-tests.log | sed 's/ \.\.\.*/ /' | cut -c1-120
  echo "== t=$(( $(date +%s) - t0 ))" )
BUILD_TARGET=tandem-bench BENCH_BATCHES=1,64,128,256 AB_VARIANTS="nosplit" AB_ARCHES=gpt2 AB_BATCHES=64,128 AB_ROUNDS=1 \
  timeout 150 bash scripts/gpu-session.sh bench ab
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz --exclude='*.ncu-rep' . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
