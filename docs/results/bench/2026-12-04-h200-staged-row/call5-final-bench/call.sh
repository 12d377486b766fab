# Call 5: the committed tree's bench at N = 1, 64, 256 against the session's start (fdd9cf3,
# .prev), then timing-only switches for the step's small kernels (experiments.diff): noadv
# (no slot-state advance kernel), nopub (no publishing kernel), noembed (no embedding gather).
# Each switch's saving bounds what folding that kernel into a neighbour could gain.
# carry [".device", ".tp", ".prev"], .prev = git archive fdd9cf3 without docs/.
set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
BUILD_TARGET=tandem-bench BENCH_BATCHES=1,64,256 timeout 330 bash scripts/gpu-session.sh bench prevbench | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
git apply docs/results/bench/2026-12-04-h200-staged-row/call5-final-bench/experiments.diff || exit 1
BUILD_TARGET=tandem-bench AB_VARIANTS="none noadv nopub noembed" AB_ARCHES=gpt2 AB_BATCHES=1 AB_ROUNDS=1 \
  timeout 100 bash scripts/gpu-session.sh ab | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
