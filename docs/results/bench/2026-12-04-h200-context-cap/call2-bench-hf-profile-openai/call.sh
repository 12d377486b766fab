# Call 2 (carry [".device", ".tp"]), from the repository root:
#   bash docs/results/bench/2026-12-04-h200-context-cap/call2-bench-hf-profile-openai/call.sh
# On the committed tree (no switches): the bench (N = 1, 64, 256), N=1 alone in four
# more processes (the A/B's form: one mode a process), transformers' static-cache
# generate on the same checkpoint, Nsight Compute's per-kernel table at N = 1 and 64,
# and the server against in-process (the openai step). The device tool returns at most
# 8 files: the rest are deleted at the end.
set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
{
BENCH_BATCHES=1,64,256 timeout 300 bash scripts/gpu-session.sh bench
echo "== t=$(( $(date +%s) - t0 ))"
( source .device/prelude.sh
  for i in 1 2 3 4; do
    build-gpu/bin/tandem-bench --batch=1 --modes=double_buffered_graphs > "$OUT/alone.txt" 2>&1
    grep -E "^gpt2" "$OUT/alone.txt" | sed "s/^/alone $i: /"
  done )
timeout 100 bash scripts/gpu-session.sh hf 2>&1 | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
timeout 150 bash scripts/gpu-session.sh profile 2>&1 | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
timeout 150 bash scripts/gpu-session.sh openai 2>&1 | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
} | tee "$OUT/output.txt"
cd "$OUT" && rm -f build.log cmake.log bench.txt alone.txt hf.txt ./*.csv ./*.err ./*-order.txt \
  openai-server.log openai-grpc-*.jsonl openai-chat-*.jsonl openai-completions-*.jsonl
ls
