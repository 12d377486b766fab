# From the repository root, carry [".device", ".tp"]:
#   bash docs/results/bench/2026-12-04-h200-delivery/call8-test-bench-idle/call.sh
# The GPU suite on the delivery-thread engine, the in-process bench at N=1, and the GPU idle
# through the server (the idle step: 16 x 256 and 1 x 512 tokens, each pipeline).
set -u
tar -xJf .tp/third_party.tar.xz
TEST_TIMEOUT=300 BENCH_BATCHES=1 bash scripts/gpu-session.sh test bench idle 2>&1 | tee "$OUT/output.txt"
cd "$OUT" && rm -f build.log cmake.log bench.txt
ls
