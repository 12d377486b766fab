# Call 3: the GPU suite on 5a1c07e (+ the split GPU tests), the bench against b49dc5e (.prev,
# the session's first tree), and a mutant with both new pre-wait loads moved after the wait
# (the wait-placement test must fail, naming the LayerNorm projections and LayerNormKernel).
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
load = "  kernel::LoadFirstNormChunk(norm_weight, norm_bias, active, K, norm_first);\n"
wait = "  kernel::WaitForPreviousKernel();\n"
assert load in s; s = s.replace(load, "")
i = s.index(wait, s.index("kernel::NormChunk<kNorm> norm_first;")); s = s[:i + len(wait)] + load + s[i + len(wait):]
start = s.index("  float gamma[kLayerNormHeld], beta[kLayerNormHeld];\n")
end = s.index(wait, start)
pre = s[start:end]
s = s[:start] + s[end:end + len(wait)] + pre + s[end + len(wait):]
open(p, "w").write(s)
PY
git diff --stat
( source .device/prelude.sh > /dev/null 2>&1
  cmake --build build-gpu -j16 --target tandem_model > $OUT/mutant-build.log 2>&1 || tail -20 $OUT/mutant-build.log
  ctest --test-dir build-gpu -R "WaitPlacement" --output-on-failure > $OUT/mutant.log 2>&1; echo "mutant ctest rc=$? (must be non-zero)"
  grep -E "FAIL|checked" $OUT/mutant.log | cut -c1-220 | sort | uniq | head -30 )
cp /tmp/orig.cu $f
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz --exclude='*.ncu-rep' . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
