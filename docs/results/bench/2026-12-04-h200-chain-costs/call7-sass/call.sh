# Device call 7 (carry [".device", ".tp"]), from the repository root:
#
#   bash docs/results/bench/2026-12-04-h200-chain-costs/call7-sass/call.sh
#
# Nsight Compute's instruction statistics, source counters (SASS with executed instructions
# and stall samples per line) and warp states for the first LayerNorm + Q/K/V, attention and
# LayerNorm + fc kernels of the 100th N=1 decode step: where each warp's ~780 instructions go
# (README.md, call 5), before any change to them is A/B'd. Reports (.ncu-rep) and their text
# (the flags of `gpu-session.sh attnsass`).
set -u
tar -xJf .tp/third_party.tar.xz
source .device/prelude.sh  # ncu on the PATH
t0=$(date +%s)
BUILD_TARGET=tandem-bench timeout 300 bash scripts/gpu-session.sh | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
TANDEM_PROFILE_DECODE_STEP=100 timeout 400 ncu --profile-from-start off --graph-profiling node \
  --clock-control none --cache-control none -k "regex:FusedLinearKernel|SplitDecodeAttention" \
  --launch-count 3 --import-source yes --section InstructionStats --section SourceCounters \
  --section WarpStateStats --section SchedulerStats -f -o "$OUT/ncu-n1-instructions" \
  build-gpu/bin/tandem-bench --batch=1 --modes=double_buffered_graphs --new_tokens=128 \
  > "$OUT/ncu-n1-instructions.log" 2>&1
echo "ncu rc $?"
ncu --import "$OUT/ncu-n1-instructions.ncu-rep" --page details --print-details all \
  > "$OUT/ncu-n1-instructions.txt" 2>&1
ncu --import "$OUT/ncu-n1-instructions.ncu-rep" --page source --csv --print-source sass \
  > "$OUT/ncu-n1-sass.csv" 2>&1
grep -E "^  [A-Za-z_].*\(|Executed Instructions|Issued Instructions|Warp Cycles Per Issued" \
  "$OUT/ncu-n1-instructions.txt" | head -30
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
