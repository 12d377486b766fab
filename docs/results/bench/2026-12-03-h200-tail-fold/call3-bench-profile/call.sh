# Call 3 (right after call 2, the same machine): the bench at N = 1, 64, 256 (sync and
# double-buffered, with graphs) and the per-kernel profile at N = 1 and 64 on the final tree.
set -u; tar -xJf .tp/third_party.tar.xz; t0=$(date +%s)
BUILD_TARGET=tandem-bench BENCH_BATCHES=1,64,256 PROFILE_BATCHES="1 64" timeout 400 bash scripts/gpu-session.sh bench profile 2>&1 | tail -40
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz --exclude='*.ncu-rep' . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
