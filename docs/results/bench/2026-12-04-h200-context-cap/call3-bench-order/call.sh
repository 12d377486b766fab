# Call 3 (carry [".device", ".tp"]), from the repository root:
#   bash docs/results/bench/2026-12-04-h200-context-cap/call3-bench-order/call.sh
# Why the bench's full table reads N=1 1-2 us above one-mode processes: on the committed
# tree, N=1 double-buffered + graphs alone, after sync + graphs at N=1 in the same process,
# after the full table (N = 1, 64, 256, both modes) in the same process and in the next
# process, and three times in one process; the GPU's clocks and temperature (read-only
# nvidia-smi queries) between them.
set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
{
BUILD_TARGET=tandem-bench timeout 200 bash scripts/gpu-session.sh
source .device/prelude.sh
b=build-gpu/bin/tandem-bench
gpu() { nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader 2>&1 | sed "s/^/  gpu: /"; }
rows() { grep -E "^gpt2" "$1" | sed "s/^/$2: /"; }
gpu
for i in 1 2; do $b --batch=1 --modes=double_buffered_graphs > "$OUT/r.txt" 2>&1; rows "$OUT/r.txt" "alone $i"; done
gpu
for i in 1 2; do $b --batch=1 --modes=sync_graphs,double_buffered_graphs > "$OUT/r.txt" 2>&1; rows "$OUT/r.txt" "sync first $i"; done
gpu
$b --batch=1,64,256 --modes=sync_graphs,double_buffered_graphs > "$OUT/r.txt" 2>&1; rows "$OUT/r.txt" "full table"
gpu
$b --batch=1 --modes=double_buffered_graphs > "$OUT/r.txt" 2>&1; rows "$OUT/r.txt" "alone after the table"
gpu
$b --batch=1,1,1 --modes=double_buffered_graphs > "$OUT/r.txt" 2>&1; rows "$OUT/r.txt" "three in one process"
$b --batch=64,256,1 --modes=double_buffered_graphs > "$OUT/r.txt" 2>&1; rows "$OUT/r.txt" "after 64 and 256, one process"
gpu
echo "== t=$(( $(date +%s) - t0 ))"
} | tee "$OUT/output.txt"
cd "$OUT" && rm -f build.log cmake.log r.txt
