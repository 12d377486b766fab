# The next session's first device call (carry [".device", ".tp", ".prev"], .prev = b49dc5e's
# tree without docs: `git archive b49dc5e | tar -x -C .prev; rm -rf .prev/docs`): the whole GPU
# suite on the committed kNormInRegisters kernel (bfa7647; only 4 tests ran with it, as
# TANDEM_EXPERIMENT=lnreg), a mutant with its LayerNorm loads after the wait (the
# wait-placement test must fail), then the bench against b49dc5e (expected: N=1 ~227 -> ~211).
set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
TEST_TIMEOUT=300 timeout 330 bash scripts/gpu-session.sh test
echo "== t=$(( $(date +%s) - t0 ))"
BUILD_TARGET=tandem-bench BENCH_BATCHES=1,2,64,256 timeout 210 bash scripts/gpu-session.sh bench prevbench
echo "== t=$(( $(date +%s) - t0 ))"
f=core/model/cuda/decode_kernels.cu; cp $f /tmp/orig.cu
python3 - "$f" <<'PY'
import sys
p = sys.argv[1]; s = open(p).read()
load = "  if constexpr (kNormInRegisters) kernel::LoadNormChunk(norm_weight, norm_bias, active, K, norm);\n"
wait = "  kernel::WaitForPreviousKernel();\n"
assert load in s and s.count(wait) >= 1
s = s.replace(load, "")
i = s.index(wait, s.index("kernel::NormChunk norm;"))
s = s[:i + len(wait)] + load + s[i + len(wait):]
open(p, "w").write(s)
PY
( source .device/prelude.sh > /dev/null 2>&1
  cmake --build build-gpu -j16 --target tandem_model > $OUT/mutant-build.log 2>&1 || tail -20 $OUT/mutant-build.log
  ctest --test-dir build-gpu -R "WaitPlacement" --output-on-failure > $OUT/mutant.log 2>&1; echo "mutant ctest rc=$? (must be non-zero)"
  grep -E "FAIL|checked" $OUT/mutant.log | cut -c1-200 | sort | uniq | head -12 )
cp /tmp/orig.cu $f
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz --exclude='*.ncu-rep' . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
