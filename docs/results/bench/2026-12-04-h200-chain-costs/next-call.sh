# Prepared for the next session (carry [".device", ".tp"]), from the repository root:
#
#   bash docs/results/bench/2026-12-04-h200-chain-costs/next-call.sh
#
# next-experiments.diff compiles K in (temporary switches, TANDEM_EXPERIMENT): kln = the one-row
# LayerNorm projections (Q/K/V, fc) at K = 768; kgemv = the one-row GEMVs at K = 768
# (attention-out) and 3072 (fc2); khead = the one-row head at K = 768 (76 registers instead of
# 95, so its occupancy-sized grid becomes 3 blocks a multiprocessor); khead2 = the same kernel
# on 2 a multiprocessor. Locally (nvcc 13, PTX): the LayerNorm + fc kernel's code after the wait
# goes from 1,045 to 649 PTX instructions (the fourth, unused chunk and the bounds checks), its
# registers 122 -> 118; the GEMVs keep 87 / 88. Call 7 put ~23 % of a LayerNorm projection
# warp's executed instructions on addresses, bounds and parameters.
# First the GPU tests that compare these kernels' bits with every switch on, then the N=1 A/B.
set -u
here=docs/results/bench/2026-12-04-h200-chain-costs
tar -xJf .tp/third_party.tar.xz
git apply "$here/next-experiments.diff" || exit 1
t0=$(date +%s)
# The whole build (tests included); its errors print, and stop the call.
timeout 330 bash scripts/gpu-session.sh | grep -v "build ok"
[ "${PIPESTATUS[0]}" = 0 ] || exit 1
( source .device/prelude.sh
  TANDEM_EXPERIMENT=kln-kgemv-khead ctest --test-dir build-gpu -L gpu --output-on-failure \
      -R "DecodeKernel|FusedLinear|GemvKernel|EngineModes" --timeout 120 > "$OUT/gpu-tests-fixed-k.log" 2>&1
  grep -E "tests passed|Failed|\*\*\*" "$OUT/gpu-tests-fixed-k.log" | tail -12 )
echo "== t=$(( $(date +%s) - t0 ))"
BUILD_TARGET=tandem-bench AB_VARIANTS="none kln kgemv khead khead2 kln-kgemv-khead2" AB_ARCHES=gpt2 \
  AB_BATCHES=1 AB_ROUNDS=2 timeout 200 bash scripts/gpu-session.sh ab | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
