set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
BUILD_TARGET=tandem-bench AB_VARIANTS="halves128 halves63 halves47" AB_ARCHES=gpt2 AB_BATCHES=32,40,48,56,64,80 AB_ROUNDS=2 \
  timeout 450 bash scripts/gpu-session.sh ab
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz --exclude='*.ncu-rep' . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
