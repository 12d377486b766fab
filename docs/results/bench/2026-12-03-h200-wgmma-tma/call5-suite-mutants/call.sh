# The next session's first device call (run through the device tool with carry
# [".device", ".tp", ".prev"], .prev = 5132764's tree, the build before the
# warp-group kernel): the whole GPU suite on the final tree (two of its tests
# have not run yet), one mutant per new check, then the bench against 5132764.
set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
TEST_TIMEOUT=300 timeout 360 bash scripts/gpu-session.sh test
echo "== t=$(( $(date +%s) - t0 ))"
# Mutant 1: fc2's split grid allowed a whole wave (WgmmaLinearTest's choice checks must fail).
# Mutant 2: the weight tile requested after the wait (the wait-placement test must fail).
# Mutant 3: the kernel's GELU dropped (WgmmaLinearTest and, in the step, the new
#           Gpt2SmallWidthBatchesMatchTheReference must fail).
f=core/model/cuda/wgmma_linear_kernel.cu; cp $f /tmp/orig.cu
for m in 1 2 3; do
  cp /tmp/orig.cu $f
  python3 - "$f" "$m" <<'PY'
import sys
p, m = sys.argv[1], sys.argv[2]; s = open(p).read()
if m == "1":
    old = "return ConfigWithin(rows, K, N, max_blocks / 2, /*splits=*/0);"
    assert old in s; s = s.replace(old, "return ConfigWithin(rows, K, N, max_blocks, /*splits=*/0);")
elif m == "3":
    old = "return gelu ? kernel::GeluTanh(v) : v;"
    assert old in s; s = s.replace(old, "return v;")
else:
    wait = "  kernel::WaitForPreviousKernel();  // x comes from the previous kernel\n"
    request = s[s.index("  // The weights and bias are constant"):s.index(wait)]
    s = s.replace(request, "").replace(wait, wait + request)
open(p, "w").write(s)
PY
  ( source .device/prelude.sh > /dev/null 2>&1
    cmake --build build-gpu -j16 --target tandem_model wgmma_linear_test cuda_runner_test > $OUT/mutant$m-build.log 2>&1 || tail -20 $OUT/mutant$m-build.log
    ctest --test-dir build-gpu -R "WgmmaLinear|WaitPlacement|Gpt2SmallWidth" --output-on-failure > $OUT/mutant$m.log 2>&1; echo "mutant $m ctest rc=$? (must be non-zero)"
    grep -E "Failed|FAIL|Passed" $OUT/mutant$m.log | head -8 )
done
cp /tmp/orig.cu $f
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz --exclude='*.ncu-rep' . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
