set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
( source .device/prelude.sh > /dev/null 2>&1
  cmake -S . -B build-gpu $DEVICE_CMAKE_ARGS > $OUT/cmake.log 2>&1
  cmake --build build-gpu -j16 --target tandem-bench cuda_runner_test tandem-linear-bench > $OUT/build.log 2>&1 || { grep -A8 -m5 error $OUT/build.log; exit 1; }
  echo "== built t=$(el)"
  for e in lnregs residearly; do
    TANDEM_EXPERIMENT=$e timeout 90 build-gpu/bin/cuda_runner_test \
      --gtest_filter='DecodeKernelTest.*:EngineModesTest.EveryMode*:EngineModesTest.Llama*:GemvKernelTest.*:Families/LlamaCudaTest.*' > $OUT/$e-tests.log 2>&1
    echo "$e tests rc=$?"; grep -E "^\[  PASSED|^\[  FAILED" $OUT/$e-tests.log | head -8
  done
  echo "== exp tests t=$(el)" )
BUILD_TARGET=tandem-bench AB_VARIANTS="none lnregs residearly" AB_ARCHES="gpt2 llama" AB_BATCHES=1,2 AB_ROUNDS=2 \
  timeout 200 bash scripts/gpu-session.sh ab
echo "== ab t=$(el)"
BUILD_TARGET=tandem-linear-bench SURVEY_ROWS=64,256 LINEAR_BENCH_SHAPES=head timeout 120 bash scripts/gpu-session.sh linearsurvey
echo "== t=$(el)"
cd $OUT && tar czf /tmp/all.tgz --exclude='*.ncu-rep' . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
