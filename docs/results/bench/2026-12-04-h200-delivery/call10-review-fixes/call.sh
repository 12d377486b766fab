# From the repository root, carry [".device", ".tp"]:
#   bash docs/results/bench/2026-12-04-h200-delivery/call10-review-fixes/call.sh
# After the review's fixes (delivery thread by sequence id; Flush waits while a delivery
# thread is a turn behind): the GPU engine tests (every engine mode against synchronous
# eager) and the idle step through the server.
set -u
tar -xJf .tp/third_party.tar.xz
{
source .device/prelude.sh
cmake -S . -B build-gpu $DEVICE_CMAKE_ARGS > /dev/null 2>&1 && cmake --build build-gpu -j16 > "$OUT/build.log" 2>&1 \
  || { grep -A8 -m5 error "$OUT/build.log"; exit 1; }
echo "== build ok"
ctest --test-dir build-gpu -L gpu -R "EngineModes|CudaRunnerTest" --timeout 300 2>&1 | grep -E "Test +#|tests passed"
bash scripts/gpu-session.sh idle 2>&1 | grep -v "build ok"
} 2>&1 | tee "$OUT/output.txt"
rm -f "$OUT/build.log" "$OUT/cmake.log"
