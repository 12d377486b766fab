# Call 2: idle between steps with two streams (conn1: CUDA_DEVICE_MAX_CONNECTIONS=1;
# hipri: high-priority streams; nomid: no middle event in decode-only steps) and the one-row
# LayerNorm statistics in one butterfly (lnfast), in one build. carry [".device", ".tp"].
set -u
here=docs/results/bench/2026-12-04-h200-idle-streams/call2-idle-lnfast
tar -xJf .tp/third_party.tar.xz
git apply "$here/experiments.diff" || exit 1
t0=$(date +%s)
BUILD_TARGET=tandem-bench AB_VARIANTS="none conn1 hipri nomid lnfast" AB_ARCHES=gpt2 AB_BATCHES=1 \
  AB_ROUNDS=2 timeout 420 bash scripts/gpu-session.sh ab | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
BUILD_TARGET=tandem-bench AB_VARIANTS="none conn1" AB_ARCHES=gpt2 AB_BATCHES=64,256 \
  AB_ROUNDS=1 timeout 150 bash scripts/gpu-session.sh ab | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
