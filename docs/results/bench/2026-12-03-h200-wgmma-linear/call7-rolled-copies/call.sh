set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
( source .device/prelude.sh > /dev/null 2>&1
  cmake -S . -B build-gpu $DEVICE_CMAKE_ARGS > $OUT/cmake.log 2>&1
  cmake --build build-gpu -j16 --target tandem-linear-bench > $OUT/build.log 2>&1 || { grep -B2 -A12 -m5 "error" $OUT/build.log | head -40; exit 1; }
  echo "== built t=$(( $(date +%s) - t0 ))"
  LINEAR_BENCH_ROWS=64,256 LINEAR_BENCH_WGMMA_ALL=1 timeout 60 build-gpu/bin/tandem-linear-bench $OUT/linear.jsonl > $OUT/linear.txt 2>&1
  echo "linear rc=$?"; cut -c1-160 $OUT/linear.txt )
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
