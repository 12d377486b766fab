set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
TEST_TIMEOUT=300 bash scripts/gpu-session.sh test
echo "== t=$(( $(date +%s) - t0 ))"
AB_VARIANTS="none skinnyln ahead aheadall" AB_ARCHES=gpt2 AB_BATCHES=16,32,64,128,256 AB_ROUNDS=2 \
  timeout 200 bash scripts/gpu-session.sh ab
echo "== t=$(( $(date +%s) - t0 ))"
TANDEM_EXPERIMENT=skinnyln timeout 150 build-gpu/bin/cuda_runner_test > $OUT/skinnyln-runner.txt 2>&1; echo "runner rc=$?"
TANDEM_EXPERIMENT=skinnyln timeout 60 build-gpu/bin/skinny_linear_test > $OUT/skinnyln-skinny.txt 2>&1; echo "skinny rc=$?"
grep -E "PASSED|FAILED" $OUT/skinnyln-*.txt | head -20
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz --exclude='*.ncu-rep' . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
