set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
BUILD_TARGET=tandem-linear-bench LINEARNCU_ROWS=256 LINEARNCU_KERNELS='WgmmaLinear' LINEARNCU_LINES=120 \
  timeout 300 bash scripts/gpu-session.sh linearncu
grep -E "WgmmaLinear|excessive|Issued Warp|SM Active|Duration|L2 Cache Throughput|Shared" $OUT/ncu-linear.txt | cut -c1-170 | head -60
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz --exclude='*.ncu-rep' . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
