set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
BUILD_TARGET=tandem-linear-bench LINEARNCU_ROWS=256 LINEARNCU_KERNELS='WgmmaLinear|nvjet' LINEARNCU_LINES=160 \
  timeout 240 bash scripts/gpu-session.sh linearncu
echo "== t=$(( $(date +%s) - t0 ))"
BUILD_TARGET=tandem-bench BENCH_BATCHES=1,2,16,64,256 timeout 200 bash scripts/gpu-session.sh bench
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz --exclude='*.ncu-rep' . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
