# From the repository root, carry [".device", ".tp"] (~400 s on a fresh machine):
#   bash docs/results/bench/2026-12-04-h200-delivery/call10-final-suite-bench-idle/call.sh
# The final tree (the review's changes to the delivery threads included): every GPU test,
# the in-process bench at N = 1, 64 and 256, and the GPU idle through the server (the idle
# step: 16 x 256 and 1 x 512 tokens, each pipeline).
set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
{
TEST_TIMEOUT=300 BENCH_BATCHES=1,64,256 bash scripts/gpu-session.sh test bench idle
echo "== t=$(( $(date +%s) - t0 ))"
} 2>&1 | tee "$OUT/output.txt"
cd "$OUT" && rm -f build.log cmake.log bench.txt
ls
