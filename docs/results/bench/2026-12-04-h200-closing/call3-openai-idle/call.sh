# From the repository root, carry [".device", ".tp"]:
#   bash docs/results/bench/2026-12-04-h200-closing/call3-openai-idle/call.sh
# A second reading of the server against in-process (the openai step, 64 streams), and the
# GPU idle fraction through the server's /metrics in each pipeline mode (the idle step:
# 16 streams of 256 tokens, then 1 stream of 512). At most 8 files come back.
set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
{
timeout 560 bash scripts/gpu-session.sh openai idle 2>&1 | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
} | tee "$OUT/output.txt"
cd "$OUT" && rm -f build.log cmake.log ./*.err openai-server.log openai-grpc-*.jsonl \
  openai-chat-*.jsonl openai-completions-*.jsonl
ls
