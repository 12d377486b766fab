set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
( source .device/prelude.sh > /dev/null 2>&1
  NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  $NVCC -std=c++17 -arch=sm_90a -I. -o /tmp/probe .tp/wgmma_probe.cu > $OUT/probe-build.log 2>&1 && /tmp/probe > $OUT/probe.log 2>&1
  echo "probe rc=$?"; cat $OUT/probe.log; tail -5 $OUT/probe-build.log )
echo "== t=$(( $(date +%s) - t0 ))"
TEST_TIMEOUT=300 bash scripts/gpu-session.sh test
echo "== t=$(( $(date +%s) - t0 ))"
# Mutant: RowLayerNormKernel's weight and bias read after the wait.
f=core/model/cuda/decode_kernels.cu; cp $f /tmp/orig.cu
python3 - "$f" <<'PY'
import sys
p = sys.argv[1]; s = open(p).read()
start = s.index("RowLayerNormKernel(T* x")
wait = "  kernel::WaitForPreviousKernel();\n  const size_t row = static_cast<size_t>(blockIdx.x) * channels;\n"
i = s.index(wait, start)
s = s[:i] + "  const size_t row = static_cast<size_t>(blockIdx.x) * channels;\n" + s[i + len(wait):]
j = s.index("  uint4 gamma_raw[kVecs], beta_raw[kVecs];\n", start)
s = s[:j] + "  kernel::WaitForPreviousKernel();\n" + s[j:]
open(p, "w").write(s)
PY
git diff --stat
( source .device/prelude.sh > /dev/null 2>&1
  cmake --build build-gpu -j16 --target tandem_model > $OUT/mutant-build.log 2>&1 || tail -20 $OUT/mutant-build.log
  ctest --test-dir build-gpu -R WaitPlacement --output-on-failure > $OUT/mutant-waitplacement.log 2>&1; echo "mutant rc=$?"
  grep -i "RowLayerNorm\|fail\|pass" $OUT/mutant-waitplacement.log | head -12 )
cp /tmp/orig.cu $f
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz --exclude='*.ncu-rep' . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
