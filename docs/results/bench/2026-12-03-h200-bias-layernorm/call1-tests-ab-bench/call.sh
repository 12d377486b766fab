set -u
tar -xJf .tp/third_party.tar.xz
rm -rf build-prev
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
TEST_TIMEOUT=300 bash scripts/gpu-session.sh test
echo "== tested t=$(el)"
( source .device/prelude.sh > /dev/null 2>&1
  for e in lnwarp lnwarp1 embedln embedlnwarp; do
    TANDEM_EXPERIMENT=$e timeout 60 build-gpu/bin/cuda_runner_test \
      --gtest_filter='DecodeKernelTest.FusedDecode*:EngineModesTest.EveryMode*:EngineModesTest.TwoHalvesGive*' > $OUT/$e-tests.log 2>&1
    echo "$e tests rc=$?"; grep -E "^\[  PASSED|^\[  FAILED" $OUT/$e-tests.log | head -5
  done )
echo "== exp tests t=$(el)"
AB_VARIANTS="none lnwarp lnwarp1 embedln embedlnwarp" AB_ARCHES=gpt2 AB_BATCHES=16,64,256 AB_ROUNDS=2 \
  timeout 200 bash scripts/gpu-session.sh ab
echo "== ab t=$(el)"
left=$(( 560 - $(el) ))
[ $left -gt 60 ] && BENCH_BATCHES=1,16,32,64,256 timeout $left bash scripts/gpu-session.sh bench prevbench
echo "== t=$(el)"
cd $OUT && tar czf /tmp/all.tgz --exclude='*.ncu-rep' . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
