set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
( source .device/prelude.sh > /dev/null 2>&1
  cmake -S . -B build-gpu $DEVICE_CMAKE_ARGS > $OUT/cmake.log 2>&1
  cmake --build build-gpu -j16 --target tandem-bench wgmma_linear_test tandem-linear-bench cuda_runner_test > $OUT/build.log 2>&1 || { grep -B2 -A12 -m5 "error" $OUT/build.log | head -60; exit 1; }
  grep -o "C75[0-9]*[^']*" $OUT/build.log | sort | uniq -c | head -5
  echo "== built t=$(( $(date +%s) - t0 ))"
  timeout 150 build-gpu/bin/wgmma_linear_test > $OUT/wgmma-test.log 2>&1; echo "wgmma test rc=$?"
  grep -E "FAILED|OK \]|checked|max error|written|rror" $OUT/wgmma-test.log | head -30
  LINEAR_BENCH_ROWS=64,128,256 LINEAR_BENCH_WGMMA_ALL=1 timeout 150 build-gpu/bin/tandem-linear-bench $OUT/linear.jsonl > $OUT/linear.txt 2>&1
  echo "linear rc=$?"; cut -c1-160 $OUT/linear.txt | tail -60
  echo "== t=$(( $(date +%s) - t0 ))"
  TANDEM_EXPERIMENT=wgmma timeout 120 build-gpu/bin/cuda_runner_test --gtest_filter='DecodeKernelTest.FusedDecode*:EngineModesTest.*' > $OUT/runner.log 2>&1; echo "runner rc=$?"
  grep -E "FAILED|PASSED" $OUT/runner.log | head -20
  echo "== t=$(( $(date +%s) - t0 ))" )
BUILD_TARGET=tandem-bench AB_VARIANTS="none wgmma" AB_ARCHES=gpt2 AB_BATCHES=128,256 AB_ROUNDS=2 \
  timeout 200 bash scripts/gpu-session.sh ab
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz --exclude='*.ncu-rep' . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
