set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
BUILD_TARGET= timeout 420 bash scripts/gpu-session.sh openai idle
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz --exclude='*.ncu-rep' . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
