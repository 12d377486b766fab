# From the repository root, carry [".device", ".tp"]:
#   bash docs/results/bench/2026-12-04-h200-delivery/call7-bench-openai/call.sh
# The sinks on delivery threads (SinkDispatcher), on one machine instance: the in-process
# bench at N=1 and 64, then the server's share of in-process throughput at 64 streams
# (the openai step) with the default --delivery_threads=2 and with --delivery_threads=0
# (the engine thread calls the sinks itself, as every build before this one did).
set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
{
BENCH_BATCHES=1,64 bash scripts/gpu-session.sh bench openai 2>&1 | grep -v "build ok"
mkdir -p "$OUT/delivery2"
mv "$OUT"/openai* "$OUT/delivery2/"
echo "== t=$(( $(date +%s) - t0 ))"
echo "== --delivery_threads=0"
SERVER_FLAGS=--delivery_threads=0 bash scripts/gpu-session.sh openai 2>&1 | grep -v "build ok"
mkdir -p "$OUT/delivery0"
mv "$OUT"/openai* "$OUT/delivery0/"
echo "== t=$(( $(date +%s) - t0 ))"
} | tee "$OUT/output.txt"
cd "$OUT" && rm -f build.log cmake.log bench.txt
for d in delivery2 delivery0; do tar -czf $d.tar.gz $d && rm -rf $d; done
ls
