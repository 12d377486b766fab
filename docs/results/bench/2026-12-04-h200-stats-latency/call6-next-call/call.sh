# Prepared for the next session's first call (carry [".device", ".tp", ".prev"]), from the
# repository root, with .prev made here first:
#
#   rm -rf .prev && mkdir .prev && git archive 22d6ba4 | tar -x -C .prev && rm -rf .prev/docs
#   bash docs/results/bench/2026-12-04-h200-stats-latency/call6-next-call/call.sh
#
# The whole GPU suite on the committed code (not yet run on a GPU: DecodeAttentionTest's
# 4-split 512-thread shapes, FusedLinearTest's mean-30 and outlier rows), the bench at N = 1, 2, 4, 8, 64, 256 against
# 22d6ba4 built in the same call, and N=1 at a 700-token prompt on both. call7-ahead5-profile/call.sh,
# issued right after on the same warm machine, measures the next lever and takes the
# per-kernel table. The device tool returns at most 8 files a call: the build logs and the
# text tables (also in output.txt) are deleted at the end.
set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
{
TEST_TIMEOUT=200 BENCH_BATCHES=1,2,4,8,64,256 timeout 330 bash scripts/gpu-session.sh test bench
echo "== t=$(( $(date +%s) - t0 ))"
BUILD_TARGET=tandem-bench BENCH_BATCHES=1,2,4,8,64,256 timeout 200 bash scripts/gpu-session.sh prevbench 2>&1 | grep -v "build ok"
( source .device/prelude.sh
  for b in build-gpu build-prev; do
    echo "$b, prompt 700:"
    $b/bin/tandem-bench --batch=1 --prompt_tokens=700 --modes=double_buffered_graphs \
        > "$OUT/$b-700.txt" 2>&1
    grep -v "^[IWE]20" "$OUT/$b-700.txt" | grep -E "^gpt2"
  done )
echo "== t=$(( $(date +%s) - t0 ))"
} | tee "$OUT/output.txt"
cd "$OUT" && rm -f build.log cmake.log cmake-prev.log build-prev.log bench.txt bench-prev.txt
