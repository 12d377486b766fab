# Call 2 (on call 1's still-warm machine and build): the positions a split takes, again, with
# the one-phase merge (experiments.diff: TANDEM_EXPERIMENT=spN, temporary).
set -u; tar -xJf .tp/third_party.tar.xz
BUILD_TARGET=tandem-bench AB_VARIANTS="none sp64 sp32 sp96" AB_ARCHES=gpt2 AB_BATCHES=1 AB_ROUNDS=2 \
  timeout 200 bash scripts/gpu-session.sh ab 2>&1 | grep -v "build ok" | tail -12
cd $OUT && tar czf /tmp/all.tgz . && find . -mindepth 1 -delete && mv /tmp/all.tgz .
