# Call 4: through the server on the final tree (the step's tokens published by a kernel into the
# pinned buffers): the OpenAI/gRPC load generator at 64 streams against tandem-bench in the same
# call, and GPU idle through the server's metrics at N = 16 and 1.
set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
BUILD_TARGET= timeout 400 bash scripts/gpu-session.sh openai idle
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz --exclude='*.ncu-rep' . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
