# From the repository root, after call 10 on the same warm machine (its build is reused),
# with the starting build in .prev/ and carry [".device", ".tp", ".prev"] (~450 s):
#   rm -rf .prev && mkdir .prev && git archive b95e079 | tar -x -C .prev && rm -rf .prev/docs .prev/third_party
#   bash docs/results/bench/2026-12-04-h200-delivery/call11-final-openai-baselines/call.sh
# The server's share of in-process throughput at 64 streams (the openai step), then the
# baselines in the same call: the previous build (b95e079) and transformers' static cache.
set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
{
BENCH_BATCHES=1,64,256 bash scripts/gpu-session.sh openai bench prevbench hf
echo "== t=$(( $(date +%s) - t0 ))"
} 2>&1 | tee "$OUT/output.txt"
cd "$OUT" && rm -f build.log cmake.log bench.txt build-prev.log cmake-prev.log
mkdir -p openai && mv openai?* openai/ && tar -czf openai.tar.gz openai && rm -rf openai
ls
