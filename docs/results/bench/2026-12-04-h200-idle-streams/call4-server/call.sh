# Call 4: through the server on the tree of call 3 (one hardware queue, no middle event): the
# OpenAI/gRPC load generator at 64 streams against tandem-bench in the same call, and GPU
# idle through the server's metrics at N = 16 and 1. carry [".device", ".tp"].
set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
BUILD_TARGET= timeout 420 bash scripts/gpu-session.sh openai idle
echo "== t=$(( $(date +%s) - t0 ))"
grep -i "CUDA_DEVICE_MAX_CONNECTIONS" $OUT/*server*.log | head -2
cd $OUT && tar czf /tmp/all.tgz --exclude='*.ncu-rep' . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
