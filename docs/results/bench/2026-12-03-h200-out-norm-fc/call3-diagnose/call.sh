# Call 3: why OutNormFc made N=1 slower (call 2: 170.4 -> 202 us per step). Timing-only switches
# (experiments.diff, temporary; their tokens are wrong): ofc1 no out-projection weight copy
# into shared memory, ofc2 no out-projection dot products, ofc4 no cluster barriers (each
# block reads its own slice), ofc7 all three; nooutfc the two kernels it replaces.
set -u
tar -xJf .tp/third_party.tar.xz
D=docs/results/bench/2026-12-03-h200-out-norm-fc
patch -p1 < $D/call2-fits-ab/experiments.diff > /dev/null || exit 1
patch -p1 < $D/call3-diagnose/experiments.diff > /dev/null || exit 1
t0=$(date +%s)
BUILD_TARGET=tandem-bench AB_VARIANTS="none ofc1 ofc2 ofc4 ofc7 nooutfc" AB_ARCHES=gpt2 AB_BATCHES=1 AB_ROUNDS=2 \
  timeout 300 bash scripts/gpu-session.sh ab | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz --exclude='*.ncu-rep' . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
