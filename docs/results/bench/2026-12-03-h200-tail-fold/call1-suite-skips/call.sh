# Call 1: the whole GPU suite on the tree with the one-row head (NormRowHead: final LayerNorm,
# LM head and greedy choice as one kernel) and the N=1 profile; two mutants that the tests must
# catch (the columns-a-warp kernel's lanes all writing the first column: FusedLinearTest; the
# one-row head's last block chosen as the first to finish: DecodeKernelTest.RowHead*); then an
# A/B at N=1 with experiments.diff (temporary): `nofold` (the old tail: LayerNorm, LM head,
# greedy kernels), `foldnorm` (the fold without the greedy choice), and upper bounds for
# folding other kernels away: `skipout` (no attention-out GEMV), `skipfc2` (no fc2 GEMV);
# their tokens are wrong, only the step time counts; `nocopy`: no copies of the tokens and
# log-probabilities to the host after the step (what they cost a step).
set -u
tar -xJf .tp/third_party.tar.xz
D=docs/results/bench/2026-12-03-h200-tail-fold/call1-suite-skips
t0=$(date +%s)
TEST_TIMEOUT=300 PROFILE_BATCHES=1 timeout 340 bash scripts/gpu-session.sh test profile
echo "== t=$(( $(date +%s) - t0 ))"
cp core/model/cuda/decode_kernels.cu /tmp/decode_kernels.cu.orig
cp core/model/cuda/lm_head_kernel.cu /tmp/lm_head_kernel.cu.orig
python3 - <<'PY'
for f, old, new in [
    ("core/model/cuda/decode_kernels.cu",
     "    for (int j = 1; j < kWarpCols; ++j) total = lane == j ? acc[j] : total;\n", ""),
    ("core/model/cuda/lm_head_kernel.cu",
     "atomicInc(ticket, gridDim.x - 1) == gridDim.x - 1;", "atomicInc(ticket, gridDim.x - 1) == 0u;")]:
    s = open(f).read(); assert old in s; open(f, "w").write(s.replace(old, new))
PY
( source .device/prelude.sh > /dev/null 2>&1
  cmake --build build-gpu -j16 --target fused_linear_test decode_kernel_test > $OUT/mutant-build.log 2>&1 || tail -5 $OUT/mutant-build.log
  timeout 60 build-gpu/bin/fused_linear_test > $OUT/mutant-columns.log 2>&1; echo "columns mutant rc=$? (must be non-zero)"
  grep -c "Failure" $OUT/mutant-columns.log
  timeout 90 build-gpu/bin/decode_kernel_test --gtest_filter='*RowHead*' > $OUT/mutant-rowhead.log 2>&1; echo "row-head mutant rc=$? (must be non-zero)"
  grep -c "Failure" $OUT/mutant-rowhead.log )
echo "== t=$(( $(date +%s) - t0 ))"
cp /tmp/decode_kernels.cu.orig core/model/cuda/decode_kernels.cu
cp /tmp/lm_head_kernel.cu.orig core/model/cuda/lm_head_kernel.cu
patch -p1 < $D/experiments.diff > /dev/null || exit 1
BUILD_TARGET=tandem-bench AB_VARIANTS="none nofold foldnorm skipout skipfc2 nocopy" AB_ARCHES=gpt2 AB_BATCHES=1 AB_ROUNDS=2 \
  timeout 190 bash scripts/gpu-session.sh ab | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz --exclude='*.ncu-rep' . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
