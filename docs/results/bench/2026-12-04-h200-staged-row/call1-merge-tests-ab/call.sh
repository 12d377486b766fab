# Call 1: the one-barrier split merge (prepared last session) in the tree, the whole GPU
# suite on it, then N=1 A/B of temporary switches (experiments.diff): x staged once a block
# in shared memory in the one-row LayerNorm projections and the row head (stage; stagel:
# projections only; stageh: head only), and 256 positions a split (sp256).
set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
TEST_TIMEOUT=120 timeout 330 bash scripts/gpu-session.sh test
echo "== t=$(( $(date +%s) - t0 ))"
BUILD_TARGET=tandem-bench AB_VARIANTS="none stage stagel stageh sp256" AB_ARCHES=gpt2 AB_BATCHES=1 AB_ROUNDS=2 \
  timeout 170 bash scripts/gpu-session.sh ab | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz --exclude='*.ncu-rep' . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
