# Device call 5 (carry [".device", ".tp"]), from the repository root: Nsight Compute's
# speed-of-light, memory, warp-state, scheduler, occupancy and launch sections for every
# kernel of one steady N=1 decode step (the 100th: TANDEM_PROFILE_DECODE_STEP), GPT-2 small
# bf16, the committed tree, at the GPU's own clocks, caches not flushed. Kernels run one at a
# time under the profiler, so the figures are each kernel alone, not the chain.
set -u
tar -xJf .tp/third_party.tar.xz
source .device/prelude.sh  # ncu on the PATH
t0=$(date +%s)
BUILD_TARGET=tandem-bench timeout 300 bash scripts/gpu-session.sh | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
TANDEM_PROFILE_DECODE_STEP=100 timeout 380 ncu --profile-from-start off --graph-profiling node \
  --clock-control none --cache-control none --section SpeedOfLight --section MemoryWorkloadAnalysis \
  --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats \
  build-gpu/bin/tandem-bench --batch=1 --modes=double_buffered_graphs --new_tokens=128 \
  > "$OUT/ncu-n1-sections.txt" 2> "$OUT/ncu-n1.err"
echo "ncu rc $? lines $(wc -l < "$OUT/ncu-n1-sections.txt")"
grep -E "^  [A-Za-z_].*\(|Duration|DRAM Throughput|Memory Throughput" "$OUT/ncu-n1-sections.txt" | head -60
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
