# Call 1: the whole GPU suite with OutNormFc (one kernel for the one-row attention-out
# projection, residual add, LayerNorm and fc), the A/B against the two kernels it replaces
# (experiments.diff, temporary: nooutfc) at N = 1 and 64, and a mutant (each lane reads its
# share of the new row from the next block's slice) that OutNormFcTest must catch.
set -u
tar -xJf .tp/third_party.tar.xz
D=docs/results/bench/2026-12-03-h200-out-norm-fc/call1-tests-ab
t0=$(date +%s)
TEST_TIMEOUT=300 timeout 330 bash scripts/gpu-session.sh test
echo "== t=$(( $(date +%s) - t0 ))"
patch -p1 < $D/experiments.diff > /dev/null || exit 1
BUILD_TARGET=tandem-bench AB_VARIANTS="none nooutfc" AB_ARCHES=gpt2 AB_BATCHES=1,64 AB_ROUNDS=2 \
  timeout 150 bash scripts/gpu-session.sh ab | grep -v "build ok"
patch -R -p1 < $D/experiments.diff > /dev/null
echo "== t=$(( $(date +%s) - t0 ))"
f=core/model/cuda/out_norm_fc_kernel.cu
cp $f /tmp/orig.cu
python3 - "$f" <<'PY'
import sys
p = sys.argv[1]; s = open(p).read()
old = "cluster.map_shared_rank(slice, k / kRows)"
assert old in s
open(p, "w").write(s.replace(old, "cluster.map_shared_rank(slice, (k / kRows + 1) % kClusterBlocks)"))
PY
( source .device/prelude.sh > /dev/null 2>&1
  cmake --build build-gpu -j16 --target fused_linear_test > $OUT/mutant-build.log 2>&1 || tail -20 $OUT/mutant-build.log
  ctest --test-dir build-gpu -R "FusedLinear|OutNormFc" --output-on-failure > $OUT/mutant.log 2>&1
  echo "mutant ctest rc=$? (must be non-zero)"
  grep -E "Failure|FAILED|fc, " $OUT/mutant.log | cut -c1-160 | sort | uniq -c | head -8 )
cp /tmp/orig.cu $f
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz --exclude='*.ncu-rep' . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
