# A call for the next session (carry [".device", ".tp"]; .tp/third_party.tar.xz as usual):
# 1. the whole GPU suite on this session's last tree (519593e and later: comments,
#    static_asserts, SwiGLU kept on the looping GEMV, the wait-placement test's new check;
#    call 3 ran the suite on 82bac68);
# 2. a mutant of the columns-a-warp kernel (every lane writes its warp's first column):
#    FusedLinearTest must fail;
# 3. the per-kernel profile at N=1 for the README's table (Nsight Compute);
# 4. an A/B of prepared-lm-head-loop.diff (the LM head at one row as one wave of blocks whose
#    warps loop over columns, the next column's weights loading while the current one is
#    multiplied; the LM head costs 19.4 us on N=1's chain).
set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
TEST_TIMEOUT=300 PROFILE_BATCHES=1 timeout 420 bash scripts/gpu-session.sh test profile
echo "== t=$(( $(date +%s) - t0 ))"
cp core/model/cuda/decode_kernels.cu /tmp/decode_kernels.cu.orig
python3 - <<'PY'
f = "core/model/cuda/decode_kernels.cu"; s = open(f).read()
old = "    for (int j = 1; j < kWarpCols; ++j) total = lane == j ? acc[j] : total;\n"
assert old in s
open(f, "w").write(s.replace(old, ""))
PY
( source .device/prelude.sh > /dev/null 2>&1
  cmake --build build-gpu -j16 --target fused_linear_test > $OUT/mutant-build.log 2>&1 || tail -5 $OUT/mutant-build.log
  timeout 60 build-gpu/bin/fused_linear_test > $OUT/mutant.log 2>&1; echo "mutant rc=$? (must be non-zero)"
  grep -c "Failure" $OUT/mutant.log )
echo "== t=$(( $(date +%s) - t0 ))"
cp /tmp/decode_kernels.cu.orig core/model/cuda/decode_kernels.cu
patch -p1 < docs/results/bench/2026-12-03-h200-resident-chain/prepared-lm-head-loop.diff > /dev/null || exit 1
BUILD_TARGET=tandem-bench AB_VARIANTS="none lmloop" AB_ARCHES=gpt2 AB_BATCHES=1,2 AB_ROUNDS=2 \
  timeout 120 bash scripts/gpu-session.sh ab | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
