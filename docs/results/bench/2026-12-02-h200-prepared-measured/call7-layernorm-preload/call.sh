set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
( source .device/prelude.sh > /dev/null 2>&1
  cmake -S . -B build-gpu $DEVICE_CMAKE_ARGS > $OUT/cmake.log 2>&1
  cmake --build build-gpu -j16 --target tandem-bench cuda_runner_test > $OUT/build.log 2>&1 || { grep -A8 -m5 error $OUT/build.log; exit 1; }
  echo "== built t=$(( $(date +%s) - t0 ))"
  TANDEM_EXPERIMENT=lnpre timeout 60 build-gpu/bin/cuda_runner_test \
    --gtest_filter='DecodeKernelTest.FusedDecode*:EngineModesTest.EveryMode*:EngineModesTest.TwoHalvesGive*' > $OUT/lnpre-tests.log 2>&1
  echo "lnpre tests rc=$?"; grep -E "^\[  PASSED|^\[  FAILED|^\[       OK" $OUT/lnpre-tests.log | head )
BUILD_TARGET=tandem-bench AB_VARIANTS="none lnpre" AB_ARCHES=gpt2 AB_BATCHES=64,256 AB_ROUNDS=2 \
  timeout 100 bash scripts/gpu-session.sh ab
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
