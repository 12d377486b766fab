set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
TEST_TIMEOUT=300 AB_VARIANTS="cublas none whole" AB_ARCHES=gpt2 AB_BATCHES=64,96,128,192,256 AB_ROUNDS=2 \
  timeout 560 bash scripts/gpu-session.sh test ab
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz --exclude='*.ncu-rep' . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
