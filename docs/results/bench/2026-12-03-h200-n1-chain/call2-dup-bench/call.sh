# Call 2: the lnreg variant's exactness; at N=1 each layer kernel launched twice (dup-*: its
# cost on the chain) and lnreg, two rounds; the bench against 5132764 (.prev); the split
# tandem-linear-bench.
set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
( source .device/prelude.sh > /dev/null 2>&1
  cmake -S . -B build-gpu $DEVICE_CMAKE_ARGS > $OUT/cmake.log 2>&1
  cmake --build build-gpu -j16 --target tandem-bench cuda_runner_test decode_kernel_test tandem-linear-bench > $OUT/build.log 2>&1 || { grep -B2 -A12 -m5 "error" $OUT/build.log | head -60; exit 1; }
  echo "== built t=$(( $(date +%s) - t0 ))"
  cd build-gpu && TANDEM_EXPERIMENT=lnreg timeout 120 ctest -R "MatchesTheGatherMatmul|FusedDecodeMatches|EngineModesTest.EveryMode|AReusedSlot" --timeout 100 > $OUT/lnreg-tests.log 2>&1; echo "lnreg ctest rc=$?"
  grep -E "Test +#|tests passed" $OUT/lnreg-tests.log | sed 's/ \.\.\.*/ /' | cut -c1-120 )
echo "== t=$(( $(date +%s) - t0 ))"
BUILD_TARGET=tandem-bench AB_VARIANTS="none dup-qkv dup-attn dup-out dup-fc dup-fc2 lnreg" AB_ARCHES=gpt2 AB_BATCHES=1 AB_ROUNDS=2 \
  timeout 200 bash scripts/gpu-session.sh ab
echo "== t=$(( $(date +%s) - t0 ))"
BUILD_TARGET=tandem-bench BENCH_BATCHES=1,2,16,32,64,128,256 timeout 240 bash scripts/gpu-session.sh bench prevbench
echo "== t=$(( $(date +%s) - t0 ))"
( source .device/prelude.sh > /dev/null 2>&1
  LINEAR_BENCH_ROWS=64,256 timeout 60 build-gpu/bin/tandem-linear-bench $OUT/linear.jsonl > $OUT/linear.txt 2>&1
  echo "linear rc=$?"; cut -c1-150 $OUT/linear.txt | head -40
  LINEAR_BENCH_SURVEY=1 LINEAR_BENCH_ROWS=64 LINEAR_BENCH_SHAPES=out timeout 60 build-gpu/bin/tandem-linear-bench \
      > $OUT/linear-survey.txt 2>&1; echo "survey rc=$?"; grep "^##" $OUT/linear-survey.txt | cut -c1-200 )
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz --exclude='*.ncu-rep' . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
