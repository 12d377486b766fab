# Call 5: the session's tree (K compiled in; the row head's LayerNorm weights loaded after
# the wait). The whole GPU suite, the bench at N = 1, 64, 256, and the per-kernel profile
# of the 100th step at N = 1 and 64. Carry [".device", ".tp"]; run from the repository root.
set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
{
TEST_TIMEOUT=300 BENCH_BATCHES=1,64,256 timeout 380 bash scripts/gpu-session.sh test bench 2>&1 |
  grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
timeout 150 bash scripts/gpu-session.sh profile 2>&1 | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
} | tee "$OUT/output.txt"
rm -f "$OUT"/*.ncu-rep
