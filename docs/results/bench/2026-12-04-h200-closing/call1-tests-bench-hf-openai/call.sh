# Issue 15's full run, call 1 (carry [".device", ".tp"]), from the repository root:
#   bash docs/results/bench/2026-12-04-h200-closing/call1-tests-bench-hf-openai/call.sh
# The whole GPU suite on the committed tree, then the bench table with each (mode, N) in a
# process of its own (gpu-session.sh's bench step since ef6eeb7), transformers' generate on
# the same checkpoint, and the server against in-process (the openai step). The device tool
# returns at most 8 files: the rest are deleted at the end (build ~125 s, suite ~110 s,
# bench ~60 s, hf and openai ~150 s).
set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
{
TEST_TIMEOUT=300 BENCH_BATCHES=1,64,256 timeout 560 bash scripts/gpu-session.sh test bench hf openai \
  2>&1 | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
} | tee "$OUT/output.txt"
cd "$OUT" && rm -f build.log cmake.log bench.txt hf.txt ./*.err openai-server.log \
  openai-grpc-*.jsonl openai-chat-*.jsonl openai-completions-*.jsonl
ls
