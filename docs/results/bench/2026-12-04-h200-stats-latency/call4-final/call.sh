# Call 4 (carry [".device", ".tp"]), from the repository root, on the committed tree: the
# whole GPU suite, then the bench at N = 1, 2, 4, 8, 64, 256 (prompt 64) and at N=1 with a
# 700-token prompt (contexts 700-956: two 512-thread splits of up to 478 positions).
set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
{
TEST_TIMEOUT=200 BENCH_BATCHES=1,2,4,8,64,256 timeout 560 bash scripts/gpu-session.sh test bench
echo "== t=$(( $(date +%s) - t0 ))"
( source .device/prelude.sh
  build-gpu/bin/tandem-bench --batch=1 --prompt_tokens=700 --modes=double_buffered_graphs \
      --out="$OUT/bench-700.jsonl" > "$OUT/bench-700.txt" 2>&1
  grep -v "^[IWE]20" "$OUT/bench-700.txt" | grep -E "^(model|gpt2)" )
echo "== t=$(( $(date +%s) - t0 ))"
} | tee "$OUT/output.txt"
rm -f "$OUT/build.log" "$OUT/cmake.log"
