set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
BUILD_TARGET=tandem-linear-bench LINEARNCU_ROWS=256 LINEARNCU_KERNELS='TiledLinear|nvjet' LINEARNCU_LINES=40 \
  timeout 300 bash scripts/gpu-session.sh linearncu
echo "== t=$(( $(date +%s) - t0 ))"
( source .device/prelude.sh
  cmake --build build-gpu -j16 --target tiled_linear_test > $OUT/build-test.log 2>&1 || tail -20 $OUT/build-test.log
  timeout 120 ctest --test-dir build-gpu -R "TiledLinear" --output-on-failure > $OUT/tiled-test.log 2>&1; echo "tiled test rc=$?"
  grep -E "Passed|Failed|max error|written" $OUT/tiled-test.log | head -20 )
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz --exclude='*.ncu-rep' . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
