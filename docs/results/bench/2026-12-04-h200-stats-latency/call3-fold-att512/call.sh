# Call 3 (carry [".device", ".tp"]), from the repository root, with experiments.diff applied:
# the build; the one-row kernels' tests under fold (only their bit-equality to the
# two-row batch may fail); the attention and engine tests under att512 and att512s2; then
# the N=1 A/B, three rounds. The machine allows only a few files back, so the jsonl files
# are renamed (no commas) and the build logs removed.
set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
{
timeout 330 bash scripts/gpu-session.sh 2>&1 | grep -v "build ok"
[ "${PIPESTATUS[0]}" = 0 ] || exit 1
( source .device/prelude.sh
  TANDEM_EXPERIMENT=earlynew,fold ctest --test-dir build-gpu -L gpu --output-on-failure \
      -R "FusedLinear|DecodeKernel" --timeout 120 > "$OUT/gpu-tests-fold.log" 2>&1
  echo "fold:"; grep -E "tests passed|Failed|\*\*\*" "$OUT/gpu-tests-fold.log" | tail -8
  grep -E "Failure|vs a two-row|RelativeError|tolerance|Which is" "$OUT/gpu-tests-fold.log" \
      | sed -E 's/(two-row batch), .*/\1/' | sort | uniq -c | sort -rn | head -12
  for v in earlynew,att512 earlynew,att512s2; do
    TANDEM_EXPERIMENT=$v ctest --test-dir build-gpu -L gpu --output-on-failure \
        -R "DecodeAttention|EngineModes|DecodeKernel" --timeout 120 > "$OUT/gpu-tests-$(echo $v | tr , _).log" 2>&1
    echo "$v:"; grep -E "tests passed|Failed|\*\*\*" "$OUT/gpu-tests-$(echo $v | tr , _).log" | tail -8
  done )
echo "== t=$(( $(date +%s) - t0 ))"
BUILD_TARGET=tandem-bench AB_VARIANTS="none earlynew,onepass earlynew,fold earlynew,onepass,att512 earlynew,onepass,att512s2 earlynew,fold,att512s2" \
  AB_ARCHES=gpt2 AB_BATCHES=1 AB_ROUNDS=3 timeout 230 bash scripts/gpu-session.sh ab 2>&1 | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
} | tee "$OUT/output.txt"
cd "$OUT" && rm -f build.log cmake.log ab.log && for f in ab-*.jsonl; do mv "$f" "$(echo "$f" | tr , _)" 2>/dev/null; done
for f in ab-*.jsonl; do v=${f#ab-}; v=${v%.jsonl}; sed "s/^{/{\"variant\":\"$v\",/" "$f"; done > ab.all
rm -f ab-*.jsonl && mv ab.all ab-all.jsonl
