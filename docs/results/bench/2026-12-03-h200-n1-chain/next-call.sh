# The next session's first device call (carry [".device", ".tp", ".prev"], .prev = b49dc5e's
# tree without docs: `git archive b49dc5e | tar -x -C .prev; rm -rf .prev/docs`): the whole GPU
# suite on the committed kNormInRegisters kernel (bfa7647; only 4 tests ran with it, as
# TANDEM_EXPERIMENT=lnreg), a mutant with its LayerNorm loads after the wait (the
# wait-placement test must fail) and one for the new FusedLinearTest, then the bench against
# b49dc5e (expected: N=1 ~227 -> ~211).
set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
TEST_TIMEOUT=300 timeout 330 bash scripts/gpu-session.sh test
echo "== t=$(( $(date +%s) - t0 ))"
BUILD_TARGET=tandem-bench BENCH_BATCHES=1,2,64,256 timeout 210 bash scripts/gpu-session.sh bench prevbench
echo "== t=$(( $(date +%s) - t0 ))"
# Mutant 1: the LayerNorm loads after the wait (WaitPlacement must fail).
# Mutant 2: WarpNormDotRow takes chunk 0's LayerNorm weight for every chunk
#   (FusedLinearTest must fail; FusedDecodeMatches..., at K = 128, one vector a lane, cannot).
f=core/model/cuda/decode_kernels.cu; g=core/model/cuda/projection.cuh
cp $f /tmp/orig.cu; cp $g /tmp/orig.cuh
for m in 1 2; do
  cp /tmp/orig.cu $f; cp /tmp/orig.cuh $g
  python3 - "$f" "$g" "$m" <<'PY'
import sys
f, g, m = sys.argv[1:4]
if m == "1":
    s = open(f).read()
    load = "  if constexpr (kNormInRegisters) kernel::LoadNormChunk(norm_weight, norm_bias, active, K, norm);\n"
    wait = "  kernel::WaitForPreviousKernel();\n"
    assert load in s
    s = s.replace(load, "")
    i = s.index(wait, s.index("kernel::NormChunk norm;"))
    s = s[:i + len(wait)] + load + s[i + len(wait):]
    open(f, "w").write(s)
else:
    s = open(g).read()
    old = "Unpack<T>(norm.gamma[c], gamma);"
    assert old in s
    open(g, "w").write(s.replace(old, "Unpack<T>(norm.gamma[0], gamma);"))
PY
  ( source .device/prelude.sh > /dev/null 2>&1
    cmake --build build-gpu -j16 --target tandem_model fused_linear_test decode_kernel_test > $OUT/mutant$m-build.log 2>&1 || tail -20 $OUT/mutant$m-build.log
    ctest --test-dir build-gpu -R "WaitPlacement|FusedLinearTest|FusedDecodeMatches" --output-on-failure > $OUT/mutant$m.log 2>&1; echo "mutant $m ctest rc=$? (must be non-zero)"
    grep -E "Test +#|FAIL|checked" $OUT/mutant$m.log | cut -c1-200 | sort | uniq | head -12 )
done
cp /tmp/orig.cu $f; cp /tmp/orig.cuh $g
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz --exclude='*.ncu-rep' . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
