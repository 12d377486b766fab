# Call 3: the committed tree (82bac68): the whole GPU suite, the bench at N = 1, 64, 256
# against 1c4e327 (.prev) in the same call, and Llama-3.2-1B's N=1 (this tree and .prev).
set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
TEST_TIMEOUT=300 BENCH_BATCHES=1,64,256 timeout 480 bash scripts/gpu-session.sh test bench prevbench prevllama
echo "== t=$(( $(date +%s) - t0 ))"
BUILD_TARGET=tandem-bench AB_VARIANTS=none AB_ARCHES=llama AB_BATCHES=1,64 AB_ROUNDS=1 timeout 100 bash scripts/gpu-session.sh ab | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
rm -f $OUT/*.ncu-rep; ls $OUT
