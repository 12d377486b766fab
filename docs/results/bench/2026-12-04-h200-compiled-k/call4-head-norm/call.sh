# Call 4: 017eaae (the row head's LayerNorm weights prefetched into L2 before the wait,
# loaded after it). The tests of the changed kernels and the wait placement, the bench at
# N = 1, 64, 256, then the A/B of the head's LayerNorm loads (experiments.diff):
# none = this tree; headlate = no L2 prefetch (the loads after the wait, as ptxas placed
# them in 0266ee2); headregs = the loads into registers before the wait, predicated.
# Carry [".device", ".tp"]; run from the repository root.
set -u
here=docs/results/bench/2026-12-04-h200-compiled-k/call4-head-norm
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
{
timeout 300 bash scripts/gpu-session.sh 2>&1 | grep -v "build ok"
( source .device/prelude.sh
  ctest --test-dir build-gpu -L gpu --output-on-failure --timeout 120 \
      -R "WaitPlacement|RowHead|FusedLinear|EngineModes|DecodeKernelTest.Fused" > "$OUT/gpu-tests.log" 2>&1
  grep -E "tests passed|Failed|FAIL|kernels checked" "$OUT/gpu-tests.log" | tail -20 )
echo "== t=$(( $(date +%s) - t0 ))"
BENCH_BATCHES=1,64,256 timeout 150 bash scripts/gpu-session.sh bench 2>&1 | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
git apply "$here/experiments.diff" || exit 1
BUILD_TARGET=tandem-bench AB_VARIANTS="none headlate headregs" AB_ARCHES=gpt2 AB_BATCHES=1 \
  AB_ROUNDS=3 timeout 200 bash scripts/gpu-session.sh ab 2>&1 | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
} | tee "$OUT/output.txt"
