# Call 2: 0266ee2 (K compiled in): the whole GPU suite, then the bench at N = 1, 64, 256
# against 97b7a3b (.prev: `git archive 97b7a3b | tar -x -C .prev; rm -rf .prev/docs`) in
# the same call. Carry [".device", ".tp"]; run from the repository root.
set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
TEST_TIMEOUT=300 BENCH_BATCHES=1,64,256 timeout 560 bash scripts/gpu-session.sh test bench prevbench 2>&1 |
  grep -v "build ok" | tee "$OUT/output.txt"
echo "== t=$(( $(date +%s) - t0 ))" | tee -a "$OUT/output.txt"
