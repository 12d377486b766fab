set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
LINEAR_BENCH_ROWS=64,128,256 timeout 400 bash scripts/gpu-session.sh linearbench
echo "== t=$(( $(date +%s) - t0 ))"
timeout 120 ctest --test-dir build-gpu -R "TiledLinear" --output-on-failure > $OUT/tiled-test.log 2>&1; echo "tiled test rc=$?"
grep -E "Passed|Failed|max error|written|Expected|Which is" $OUT/tiled-test.log | head -20
echo "== t=$(( $(date +%s) - t0 ))"
AB_VARIANTS="none tiled tiled128 tiledhalf" AB_ARCHES=gpt2 AB_BATCHES=64,128,256 AB_ROUNDS=2 \
  timeout 150 bash scripts/gpu-session.sh ab
echo "== t=$(( $(date +%s) - t0 ))"
TANDEM_EXPERIMENT=tiled timeout 100 ctest --test-dir build-gpu -R "DecodeKernelTest.FusedDecode|EngineModesTest" --output-on-failure > $OUT/tiled-engine-tests.log 2>&1; echo "engine tests (tiled) rc=$?"
grep -E "Passed|Failed|tests passed" $OUT/tiled-engine-tests.log | tail -12
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz --exclude='*.ncu-rep' . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
